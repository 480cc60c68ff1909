! Fortran tests of metadata (spec 07 F.3, F.5, F.8 walk-through 3): the
! tensogram_meta builder and its escaping, the legacy getters, the precise
! API and tensogram_value navigation, on our messages and on the
! reference's metadata_parity.tgm. Arguments: <fixtures dir> <work dir>.
program test_metadata
  use, intrinsic :: iso_c_binding
  use tensogram
  use test_support
  implicit none
  character(len=:), allocatable :: fixtures

  fixtures = argument(1)
  call test_builder_round_trip()
  call test_reference_parity()
  call test_absent_and_null()
  deallocate (fixtures)  ! a main program's allocatables live until exit
  call finish('test_metadata')

contains

  subroutine encode_with(metadata_json, meta)
    character(len=*), intent(in) :: metadata_json
    type(tensogram_metadata), intent(out) :: meta
    real(c_float) :: a(2)
    type(tensogram_buffer) :: buf
    type(tensogram_message) :: msg
    integer(c_int8_t), allocatable :: bytes(:)
    integer(c_int) :: err
    a = 0
    call tensogram_encode(a, buf, err, metadata_json=metadata_json)
    call check_err(err, TGM_ERROR_OK, 'encode with '//metadata_json)
    call buf%as_array(bytes)
    call tensogram_decode(bytes, msg, err)
    call tensogram_message_metadata(msg, meta, err)
    call check_err(err, TGM_ERROR_OK, 'metadata of '//metadata_json)
  end subroutine encode_with

  subroutine test_builder_round_trip()
    type(tensogram_meta) :: m
    type(tensogram_metadata) :: meta
    type(tensogram_value) :: v, w
    character(len=:), allocatable :: s, tricky, js
    integer(c_int64_t) :: i
    real(c_double) :: x
    logical :: ok
    call check(m%base_json() == '"base":[{}]', 'an empty builder')
    tricky = 'a "quoted" \ back'//achar(10)//'line'//achar(9)//'tab'//achar(1)//'ctl'
    call m%add_string('name', 'temperature')
    call m%add_int('level', 850_c_int64_t)
    call m%add_real('scale', 0.1_c_double)
    call m%add_string('tricky', tricky)
    call m%add_string('key "with" quotes', 'v')
    js = m%object_json()
    call check(index(js, '{"name":"temperature","level":850,"scale":0.1') == 1, 'builder members: '//js)
    call check(index(js, ',"tricky":"a \"quoted\" \\ back\nline\ttab\u0001ctl","key \"with\" quotes":"v"}') &
               > 0, 'builder escaping: '//js)
    call encode_with(m%base_json(), meta)
    call check(tensogram_metadata_get_string(meta, 'name') == 'temperature', 'legacy get_string')
    call check(tensogram_metadata_get_int(meta, 'level', -1_c_int64_t) == 850, 'legacy get_int')
    call check(tensogram_metadata_get_int(meta, 'absent', -1_c_int64_t) == -1, 'legacy get_int default')
    call check(abs(tensogram_metadata_get_float(meta, 'scale', 0.0_c_double) - 0.1_c_double) == 0, &
               'add_real reads back as the same double')
    ok = tensogram_metadata_try_get_string(meta, 'tricky', s, obj_index=1)
    call check(ok .and. s == tricky, 'escaped text reads back unchanged')
    ok = tensogram_metadata_try_get_string(meta, 'key "with" quotes', s, obj_index=1)
    call check(ok .and. s == 'v', 'escaped key')
    call check(tensogram_metadata_try_get_int(meta, 'level', i, obj_index=1) .and. i == 850, 'try_get_int')
    call check(.not. tensogram_metadata_try_get_int(meta, 'name', i, obj_index=1), 'try_get_int of text')
    call check(tensogram_metadata_try_get_float(meta, 'level', x, obj_index=1) .and. x == 850, &
               'try_get_float widens integers')
    call check(tensogram_metadata_num_objects(meta) == 1, 'one base entry')

    ! Bytes that are not UTF-8 are refused by the C layer, which says where.
    block
      type(tensogram_meta) :: bad
      real(c_float) :: a(1)
      type(tensogram_buffer) :: buf
      integer(c_int) :: err
      a = 0
      call bad%add_string('name', 'caf'//char(233))
      call tensogram_encode(a, buf, err, metadata_json=bad%base_json())
      call check(err == TGM_ERROR_INVALID_ARG .and. index(tensogram_last_error(), 'UTF-8') > 0, &
                 'Latin-1 text is refused: '//tensogram_last_error())
    end block

    ! A complete object is accepted as metadata_json too (its braces go).
    call encode_with('{"base":[{"big":9223372036854775807,"neg":-5}],"_extra_":{"who":"fortran"}}', meta)
    call check(tensogram_metadata_try_get_string(meta, 'who', s) .and. s == 'fortran', 'extra at message level')
    v = tensogram_metadata_get(meta, 'big', obj_index=1)
    call check(v%as_uint(i) .and. i == huge(i), 'as_uint of i64 max')
    call check(v%as_int(i) .and. i == huge(i), 'as_int of i64 max')
    v = tensogram_metadata_get(meta, 'neg', obj_index=1)
    call check(.not. v%as_uint(i), 'as_uint refuses a negative integer')
    call check(v%as_float(x) .and. x == -5, 'as_float widens')
    w = tensogram_metadata_extra(meta)
    v = w%get('who')
    call check(v%is_present(), 'extra() section')
    call meta%free()
    call meta%free()
    call check(tensogram_metadata_num_objects(meta) == 0 .and. tensogram_metadata_get_string(meta, 'who') == '', &
               'metadata free is idempotent and leaves a null handle')
  end subroutine test_builder_round_trip

  !> metadata_parity.tgm (the reference's): typed lookups, missing keys,
  !> nesting, arrays.
  subroutine test_reference_parity()
    type(tensogram_file) :: f
    type(tensogram_message) :: msg
    type(tensogram_metadata) :: meta
    type(tensogram_value) :: v, w, obj
    integer(c_int) :: err
    integer(c_int64_t) :: i
    real(c_double) :: x
    logical :: b, ok, found
    character(len=:), allocatable :: s
    integer(c_int8_t), allocatable :: bytes(:)
    integer :: k, n_keys
    call tensogram_file_open(fixtures//'/tgm/metadata_parity.tgm', f, err)
    call tensogram_file_decode_message(f, 1, msg, err)
    call tensogram_message_metadata(msg, meta, err)
    call check_err(err, TGM_ERROR_OK, 'parity fixture metadata')
    call check(tensogram_metadata_num_objects(meta) == 2, 'two base entries')

    call check(tensogram_metadata_has(meta, 'shortName', obj_index=2), 'has, object 2')
    call check(.not. tensogram_metadata_has(meta, 'only0', obj_index=2), 'has is scoped to the object')
    call check(tensogram_metadata_has(meta, 'only0'), 'has at message level searches base')
    call check(.not. tensogram_metadata_has(meta, 'shortName', obj_index=0), 'obj_index 0 is absent')
    call check(tensogram_metadata_try_get_int(meta, 'count', i, obj_index=1) .and. i == -5, 'negative int')
    call check(tensogram_metadata_try_get_int(meta, 'big', i, obj_index=1) .and. i == 2147483648_c_int64_t, &
               'int beyond int32')
    call check(tensogram_metadata_try_get_float(meta, 'ratio', x, obj_index=1) .and. x == 0.5_c_double, 'float')
    call check(tensogram_metadata_try_get_bool(meta, 'flag', b, obj_index=1) .and. b, 'bool')
    call check(.not. tensogram_metadata_try_get_bool(meta, 'count', b, obj_index=1), 'bool of an int')
    call check(tensogram_metadata_try_get_string(meta, 'note', s, obj_index=1) .and. len(s) == 0, 'empty text')
    call check(.not. tensogram_metadata_try_get_string(meta, 'missing', s), 'missing key')
    call check(tensogram_metadata_try_get_string(meta, 'mars.class', s, obj_index=2) .and. s == 'ea', &
               'dot path in object 2')
    call check(tensogram_metadata_get_string(meta, 'source') == 'parity-fixture', 'legacy getter finds _extra_')

    v = tensogram_metadata_get(meta, 'levels', obj_index=1)
    call check(v%kind() == TGM_VALUE_TYPE_ARRAY .and. v%len() == 3, 'array value')
    w = v%elem(2)
    call check(w%as_int(i) .and. i == 850, 'array element 2 (1-based)')
    call check(w%kind() == TGM_VALUE_TYPE_INT, 'element kind')
    w = v%elem(0)
    call check(.not. w%is_present(), 'array element 0 is absent')
    w = v%elem(4)
    call check(.not. w%is_present(), 'array element past the end is absent')

    v = tensogram_metadata_get(meta, 'mars', obj_index=1)
    call check(v%kind() == TGM_VALUE_TYPE_MAP .and. v%len() == 2, 'map value')
    n_keys = 0
    do k = 1, v%len()
      if (v%key(k) == 'class') then
        w = v%value(k)
        call check(w%as_string(s) .and. s == 'od', 'map value by position')
        n_keys = n_keys + 1
      end if
      if (v%key(k) == 'stream') n_keys = n_keys + 1
    end do
    call check(n_keys == 2, 'map keys by position')
    s = v%key(3, found)
    call check(.not. found .and. len(s) == 0, 'key past the end')
    w = v%get('stream  ')
    call check(w%as_string(s) .and. s == 'oper', 'get trims trailing blanks')
    w = v%get('class.x')
    call check(.not. w%is_present(), 'get does not split dots')

    obj = tensogram_metadata_object(meta, 1)
    v = obj%get('_reserved_')
    w = v%get('tensor')
    v = w%get('dtype')
    call check(v%kind() == TGM_VALUE_TYPE_STRING, 'object() includes _reserved_')
    obj = tensogram_metadata_object(meta, 3)
    call check(.not. obj%is_present(), 'object 3 is absent')
    w = tensogram_metadata_reserved(meta)
    v = w%get('uuid')
    call check(v%is_present(), 'reserved() section')
    ok = v%as_bytes(bytes)
    call check(.not. ok .and. size(bytes) == 0, 'as_bytes of text is false and empty')
    call check(.not. v%as_bool(b), 'as_bool of text')
  end subroutine test_reference_parity

  !> Nothing crashes on null handles or absent cursors (F.7).
  subroutine test_absent_and_null()
    type(tensogram_metadata) :: never
    type(tensogram_value) :: none, v
    integer(c_int64_t) :: i
    real(c_double) :: x
    character(len=:), allocatable :: s
    call check(tensogram_metadata_get_string(never, 'a') == '', 'get_string on a null handle')
    call check(tensogram_metadata_get_int(never, 'a', 4_c_int64_t) == 4, 'get_int on a null handle')
    call check(tensogram_metadata_get_float(never, 'a', 2.5_c_double) == 2.5_c_double, 'get_float, null')
    call check(tensogram_metadata_num_objects(never) == 0, 'num_objects on a null handle')
    call check(.not. tensogram_metadata_has(never, 'a'), 'has on a null handle')
    v = tensogram_metadata_extra(never)
    call check(.not. v%is_present(), 'extra of a null handle')
    call check(.not. none%is_present() .and. none%kind() == TGM_VALUE_TYPE_NULL, 'absent cursor')
    call check(none%len() == 0 .and. .not. none%as_int(i) .and. .not. none%as_float(x), 'absent cursor getters')
    call check(.not. none%as_string(s) .and. len(s) == 0, 'absent cursor text')
    v = none%get('a')
    call check(.not. v%is_present(), 'get on an absent cursor')
    v = none%value(1)
    call check(.not. v%is_present(), 'value on an absent cursor')
  end subroutine test_absent_and_null

end program test_metadata
