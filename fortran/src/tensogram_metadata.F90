! Metadata access of module `tensogram` (spec 07 F.3, F.5): the legacy
! coercing getters, the precise cursor API (`tensogram_value`, 1-based) and
! the `tensogram_meta` JSON builder. A submodule so that tensogram.F90 stays
! about handles, arrays and files.
submodule(tensogram) tensogram_metadata_impl
  implicit none

contains

  ! ---- helpers -------------------------------------------------------------

  !> 0-based C index of a 1-based index, or -1 when i < 1.
  pure integer(c_size_t) function zero_based(i)
    integer, intent(in) :: i
    zero_based = -1
    if (i >= 1) zero_based = int(i - 1, c_size_t)
  end function zero_based

  !> tgm_metadata_get / _get_at: message level without obj_index, else
  !> base[obj_index] (absent for obj_index < 1).
  function lookup(meta, key, obj_index) result(p)
    type(tensogram_metadata), intent(in) :: meta
    character(len=*), intent(in) :: key
    integer, intent(in), optional :: obj_index
    type(c_ptr) :: p
    character(kind=c_char), allocatable, target :: ckey(:)
    call c_string(trim(key), ckey)
    p = c_null_ptr
    if (.not. present(obj_index)) then
      p = c_tgm_metadata_get(meta%h, c_loc(ckey))
    else if (obj_index >= 1) then
      p = c_tgm_metadata_get_at(meta%h, zero_based(obj_index), c_loc(ckey))
    end if
  end function lookup

  ! ---- legacy getters (dot paths, coercing) ----------------------------------

  module procedure tensogram_metadata_get_string
    character(kind=c_char), allocatable, target :: ckey(:)
    call c_string(trim(key), ckey)
    s = f_string(c_tgm_metadata_get_string(meta%h, c_loc(ckey)))
  end procedure

  module procedure tensogram_metadata_get_int
    character(kind=c_char), allocatable, target :: ckey(:)
    call c_string(trim(key), ckey)
    v = c_tgm_metadata_get_int(meta%h, c_loc(ckey), default_val)
  end procedure

  module procedure tensogram_metadata_get_float
    character(kind=c_char), allocatable, target :: ckey(:)
    call c_string(trim(key), ckey)
    v = c_tgm_metadata_get_float(meta%h, c_loc(ckey), default_val)
  end procedure

  module procedure tensogram_metadata_num_objects
    tensogram_metadata_num_objects = int(c_tgm_metadata_num_objects(meta%h))
  end procedure

  ! ---- precise API ---------------------------------------------------------------

  module procedure tensogram_metadata_has
    tensogram_metadata_has = c_associated(lookup(meta, key, obj_index))
  end procedure

  module procedure tensogram_metadata_get
    v%p = lookup(meta, key, obj_index)
  end procedure

  module procedure tensogram_metadata_try_get_int
    type(tensogram_value) :: v
    v%p = lookup(meta, key, obj_index)
    tensogram_metadata_try_get_int = v%as_int(value)
  end procedure

  module procedure tensogram_metadata_try_get_float
    type(tensogram_value) :: v
    v%p = lookup(meta, key, obj_index)
    tensogram_metadata_try_get_float = v%as_float(value)
  end procedure

  module procedure tensogram_metadata_try_get_string
    type(tensogram_value) :: v
    v%p = lookup(meta, key, obj_index)
    tensogram_metadata_try_get_string = v%as_string(value)
  end procedure

  module procedure tensogram_metadata_try_get_bool
    type(tensogram_value) :: v
    v%p = lookup(meta, key, obj_index)
    tensogram_metadata_try_get_bool = v%as_bool(value)
  end procedure

  module procedure tensogram_metadata_object
    v%p = c_null_ptr
    if (obj_index >= 1) v%p = c_tgm_metadata_object(meta%h, zero_based(obj_index))
  end procedure

  module procedure tensogram_metadata_extra
    v%p = c_tgm_metadata_extra(meta%h)
  end procedure

  module procedure tensogram_metadata_reserved
    v%p = c_tgm_metadata_reserved(meta%h)
  end procedure

  ! ---- tensogram_value ---------------------------------------------------------

  module procedure value_is_present
    value_is_present = c_associated(self%p)
  end procedure

  module procedure value_kind
    value_kind = c_tgm_value_get_type(self%p)
  end procedure

  module procedure value_as_int
    integer(c_int64_t) :: out
    out = 0
    value_as_int = c_tgm_value_as_i64(self%p, out)
    val = out
  end procedure

  !> The u64 bit pattern in an i64 (Fortran has no unsigned kinds).
  module procedure value_as_uint
    integer(c_int64_t) :: out
    out = 0
    value_as_uint = c_tgm_value_as_u64(self%p, out)
    val = out
  end procedure

  module procedure value_as_float
    real(c_double) :: out
    out = 0
    value_as_float = c_tgm_value_as_f64(self%p, out)
    val = out
  end procedure

  module procedure value_as_bool
    logical(c_bool) :: out
    out = .false.
    value_as_bool = c_tgm_value_as_bool(self%p, out)
    val = out
  end procedure

  module procedure value_as_string
    integer(c_size_t) :: n
    type(c_ptr) :: p
    n = 0
    p = c_tgm_value_as_string(self%p, n)
    value_as_string = c_associated(p)
    val = f_string_len(p, n)
  end procedure

  module procedure value_as_bytes
    integer(c_size_t) :: n
    type(c_ptr) :: p
    integer(c_int8_t), pointer :: bytes(:)
    n = 0
    p = c_tgm_value_as_bytes(self%p, n)
    ! Never NULL for a byte string, even an empty one; n is only meaningful
    ! then.
    value_as_bytes = c_associated(p)
    if (.not. value_as_bytes) n = 0
    allocate (val(n))
    if (n == 0 .or. .not. c_associated(p)) return
    call c_f_pointer(p, bytes, [n])
    val = bytes
  end procedure

  module procedure value_len
    select case (self%kind())
    case (TGM_VALUE_TYPE_ARRAY)
      value_len = int(c_tgm_value_array_len(self%p))
    case (TGM_VALUE_TYPE_MAP)
      value_len = int(c_tgm_value_map_len(self%p))
    case default
      value_len = 0
    end select
  end procedure

  module procedure value_elem
    v%p = c_null_ptr
    if (i >= 1) v%p = c_tgm_value_array_get(self%p, zero_based(i))
  end procedure

  module procedure value_key
    integer(c_size_t) :: n
    type(c_ptr) :: p
    n = 0
    p = c_null_ptr
    if (i >= 1) p = c_tgm_value_map_key_at(self%p, zero_based(i), n)
    k = f_string_len(p, n)
    if (present(found)) found = c_associated(p)
  end procedure

  module procedure value_value
    v%p = c_null_ptr
    if (i >= 1) v%p = c_tgm_value_map_value_at(self%p, zero_based(i))
  end procedure

  !> One map key, no dot splitting; trailing blanks of `key` trimmed.
  module procedure value_get
    character(kind=c_char), allocatable, target :: ckey(:)
    call c_string(trim(key), ckey)
    v%p = c_tgm_value_map_get(self%p, c_loc(ckey))
  end procedure

  ! ---- tensogram_meta ------------------------------------------------------------

  subroutine add_member(self, key, json_value)
    class(tensogram_meta), intent(inout) :: self
    character(len=*), intent(in) :: key, json_value
    if (.not. allocated(self%members)) self%members = ''
    if (len(self%members) > 0) self%members = self%members//','
    self%members = self%members//json_string(key)//':'//json_value
  end subroutine add_member

  module procedure meta_add_string
    call add_member(self, key, json_string(val))
  end procedure

  module procedure meta_add_int
    call add_member(self, key, int_text(val))
  end procedure

  !> Written with g0: the shortest form the compiler gives that reads back
  !> as the same double.
  module procedure meta_add_real
    character(len=40) :: buf
    write (buf, '(g0)') val
    call add_member(self, key, trim(adjustl(buf)))
  end procedure

  module procedure meta_object_json
    if (allocated(self%members)) then
      js = '{'//self%members//'}'
    else
      js = '{}'
    end if
  end procedure

  module procedure meta_base_json
    js = '"base":['//self%object_json()//']'
  end procedure

  !> A JSON string literal: `"` `\` and control characters escaped
  !> (RFC 8259 §7); other bytes (UTF-8) as they are.
  module procedure json_string
    character(len=*), parameter :: hex = '0123456789abcdef'
    integer :: i, c
    js = '"'
    do i = 1, len(s)
      c = iachar(s(i:i))
      select case (c)
      case (34)
        js = js//'\"'
      case (92)
        js = js//'\\'
      case (8)
        js = js//'\b'
      case (9)
        js = js//'\t'
      case (10)
        js = js//'\n'
      case (12)
        js = js//'\f'
      case (13)
        js = js//'\r'
      case (0:7, 11, 14:31)
        js = js//'\u00'//hex(c/16 + 1:c/16 + 1)//hex(mod(c, 16) + 1:mod(c, 16) + 1)
      case default
        js = js//s(i:i)
      end select
    end do
    js = js//'"'
  end procedure

end submodule tensogram_metadata_impl
