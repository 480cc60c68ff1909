! tensogram_capi: the part of the C ABI (include/tensogram.h, spec 04 Part C,
! spec 07 Part C2) the Fortran module `tensogram` is built on, declared with
! iso_c_binding, and the C-string helpers it needs. Internal: user code uses
! `tensogram` (spec 07 Part F), whose names this module does not export.
!
! Mapping of the C types: tgm_error and enums -> integer(c_int); bool ->
! logical(c_bool); uint32_t/uint64_t -> integer(c_int32_t/c_int64_t) (bit
! patterns); every `const char*` argument -> type(c_ptr), value, so NULL can
! be passed (c_null_ptr) and strings come from `c_string`. Out-parameters
! the C side writes only on success are intent(inout): with intent(out) the
! compiler may drop the caller's initialisation of them.
module tensogram_capi
  use, intrinsic :: iso_c_binding
  implicit none
  private

  !> tgm_bytes_t: a buffer the library filled; release with c_tgm_bytes_free.
  type, bind(c), public :: c_bytes
    type(c_ptr) :: data = c_null_ptr
    integer(c_size_t) :: len = 0
  end type c_bytes

  public :: c_string, f_string, f_string_len, int_text

  interface
    ! ---- errors and byte buffers
    function c_tgm_last_error() bind(c, name='tgm_last_error') result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function
    function c_tgm_error_string(err) bind(c, name='tgm_error_string') result(p)
      import :: c_ptr, c_int
      integer(c_int), value :: err
      type(c_ptr) :: p
    end function
    function c_tgm_set_last_error(code, message) bind(c, name='tgm_set_last_error') result(r)
      import :: c_ptr, c_int
      integer(c_int), value :: code
      type(c_ptr), value :: message
      integer(c_int) :: r
    end function
    subroutine c_tgm_bytes_free(buf) bind(c, name='tgm_bytes_free')
      import :: c_bytes
      type(c_bytes), value :: buf
    end subroutine

    ! ---- encode / decode
    function c_tgm_encode(json, ptrs, lens, n, hash, threads, out) bind(c, name='tgm_encode') result(r)
      import :: c_ptr, c_size_t, c_int32_t, c_int, c_bytes
      type(c_ptr), value :: json
      type(c_ptr), intent(in) :: ptrs(*)
      integer(c_size_t), intent(in) :: lens(*)
      integer(c_size_t), value :: n
      type(c_ptr), value :: hash
      integer(c_int32_t), value :: threads
      type(c_bytes), intent(inout) :: out
      integer(c_int) :: r
    end function
    function c_tgm_decode(buf, len, native, threads, verify, out) bind(c, name='tgm_decode') result(r)
      import :: c_ptr, c_size_t, c_int32_t, c_int
      type(c_ptr), value :: buf
      integer(c_size_t), value :: len
      integer(c_int32_t), value :: native
      integer(c_int32_t), value :: threads
      integer(c_int32_t), value :: verify
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: r
    end function

    ! ---- message accessors (0-based index)
    function c_tgm_message_num_objects(msg) bind(c, name='tgm_message_num_objects') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: msg
      integer(c_size_t) :: n
    end function
    function c_tgm_object_ndim(msg, i) bind(c, name='tgm_object_ndim') result(n)
      import :: c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: msg
      integer(c_size_t), value :: i
      integer(c_int64_t) :: n
    end function
    function c_tgm_object_shape(msg, i) bind(c, name='tgm_object_shape') result(p)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: msg
      integer(c_size_t), value :: i
      type(c_ptr) :: p
    end function
    function c_tgm_object_dtype(msg, i) bind(c, name='tgm_object_dtype') result(p)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: msg
      integer(c_size_t), value :: i
      type(c_ptr) :: p
    end function
    function c_tgm_object_data(msg, i, len) bind(c, name='tgm_object_data') result(p)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: msg
      integer(c_size_t), value :: i
      integer(c_size_t), intent(inout) :: len
      type(c_ptr) :: p
    end function
    function c_tgm_message_metadata(msg, out) bind(c, name='tgm_message_metadata') result(r)
      import :: c_ptr, c_int
      type(c_ptr), value :: msg
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: r
    end function
    subroutine c_tgm_message_free(msg) bind(c, name='tgm_message_free')
      import :: c_ptr
      type(c_ptr), value :: msg
    end subroutine

    ! ---- metadata: legacy getters
    function c_tgm_metadata_num_objects(meta) bind(c, name='tgm_metadata_num_objects') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: meta
      integer(c_size_t) :: n
    end function
    function c_tgm_metadata_get_string(meta, key) bind(c, name='tgm_metadata_get_string') result(p)
      import :: c_ptr
      type(c_ptr), value :: meta, key
      type(c_ptr) :: p
    end function
    function c_tgm_metadata_get_int(meta, key, dflt) bind(c, name='tgm_metadata_get_int') result(v)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: meta, key
      integer(c_int64_t), value :: dflt
      integer(c_int64_t) :: v
    end function
    function c_tgm_metadata_get_float(meta, key, dflt) bind(c, name='tgm_metadata_get_float') result(v)
      import :: c_ptr, c_double
      type(c_ptr), value :: meta, key
      real(c_double), value :: dflt
      real(c_double) :: v
    end function

    ! ---- metadata: precise cursor API
    function c_tgm_metadata_get(meta, path) bind(c, name='tgm_metadata_get') result(p)
      import :: c_ptr
      type(c_ptr), value :: meta, path
      type(c_ptr) :: p
    end function
    function c_tgm_metadata_get_at(meta, i, path) bind(c, name='tgm_metadata_get_at') result(p)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: meta
      integer(c_size_t), value :: i
      type(c_ptr), value :: path
      type(c_ptr) :: p
    end function
    function c_tgm_metadata_object(meta, i) bind(c, name='tgm_metadata_object') result(p)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: meta
      integer(c_size_t), value :: i
      type(c_ptr) :: p
    end function
    function c_tgm_metadata_extra(meta) bind(c, name='tgm_metadata_extra') result(p)
      import :: c_ptr
      type(c_ptr), value :: meta
      type(c_ptr) :: p
    end function
    function c_tgm_metadata_reserved(meta) bind(c, name='tgm_metadata_reserved') result(p)
      import :: c_ptr
      type(c_ptr), value :: meta
      type(c_ptr) :: p
    end function
    function c_tgm_value_get_type(v) bind(c, name='tgm_value_get_type') result(t)
      import :: c_ptr, c_int
      type(c_ptr), value :: v
      integer(c_int) :: t
    end function
    function c_tgm_value_as_bool(v, out) bind(c, name='tgm_value_as_bool') result(ok)
      import :: c_ptr, c_bool
      type(c_ptr), value :: v
      logical(c_bool), intent(inout) :: out
      logical(c_bool) :: ok
    end function
    function c_tgm_value_as_i64(v, out) bind(c, name='tgm_value_as_i64') result(ok)
      import :: c_ptr, c_bool, c_int64_t
      type(c_ptr), value :: v
      integer(c_int64_t), intent(inout) :: out
      logical(c_bool) :: ok
    end function
    function c_tgm_value_as_u64(v, out) bind(c, name='tgm_value_as_u64') result(ok)
      import :: c_ptr, c_bool, c_int64_t
      type(c_ptr), value :: v
      integer(c_int64_t), intent(inout) :: out
      logical(c_bool) :: ok
    end function
    function c_tgm_value_as_f64(v, out) bind(c, name='tgm_value_as_f64') result(ok)
      import :: c_ptr, c_bool, c_double
      type(c_ptr), value :: v
      real(c_double), intent(inout) :: out
      logical(c_bool) :: ok
    end function
    function c_tgm_value_as_string(v, len) bind(c, name='tgm_value_as_string') result(p)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: v
      integer(c_size_t), intent(inout) :: len
      type(c_ptr) :: p
    end function
    function c_tgm_value_as_bytes(v, len) bind(c, name='tgm_value_as_bytes') result(p)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: v
      integer(c_size_t), intent(inout) :: len
      type(c_ptr) :: p
    end function
    function c_tgm_value_array_len(v) bind(c, name='tgm_value_array_len') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: v
      integer(c_size_t) :: n
    end function
    function c_tgm_value_array_get(v, i) bind(c, name='tgm_value_array_get') result(p)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: v
      integer(c_size_t), value :: i
      type(c_ptr) :: p
    end function
    function c_tgm_value_map_len(v) bind(c, name='tgm_value_map_len') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: v
      integer(c_size_t) :: n
    end function
    function c_tgm_value_map_key_at(v, i, len) bind(c, name='tgm_value_map_key_at') result(p)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: v
      integer(c_size_t), value :: i
      integer(c_size_t), intent(inout) :: len
      type(c_ptr) :: p
    end function
    function c_tgm_value_map_value_at(v, i) bind(c, name='tgm_value_map_value_at') result(p)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: v
      integer(c_size_t), value :: i
      type(c_ptr) :: p
    end function
    function c_tgm_value_map_get(v, key) bind(c, name='tgm_value_map_get') result(p)
      import :: c_ptr
      type(c_ptr), value :: v, key
      type(c_ptr) :: p
    end function
    subroutine c_tgm_metadata_free(meta) bind(c, name='tgm_metadata_free')
      import :: c_ptr
      type(c_ptr), value :: meta
    end subroutine

    ! ---- files
    function c_tgm_file_open(path, out) bind(c, name='tgm_file_open') result(r)
      import :: c_ptr, c_int
      type(c_ptr), value :: path
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: r
    end function
    function c_tgm_file_create(path, out) bind(c, name='tgm_file_create') result(r)
      import :: c_ptr, c_int
      type(c_ptr), value :: path
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: r
    end function
    function c_tgm_file_message_count(file, count) bind(c, name='tgm_file_message_count') result(r)
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: file
      integer(c_size_t), intent(inout) :: count
      integer(c_int) :: r
    end function
    function c_tgm_file_decode_message(file, i, native, threads, verify, out) &
        bind(c, name='tgm_file_decode_message') result(r)
      import :: c_ptr, c_size_t, c_int32_t, c_int
      type(c_ptr), value :: file
      integer(c_size_t), value :: i
      integer(c_int32_t), value :: native, threads, verify
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: r
    end function
    function c_tgm_file_read_message(file, i, out) bind(c, name='tgm_file_read_message') result(r)
      import :: c_ptr, c_size_t, c_int, c_bytes
      type(c_ptr), value :: file
      integer(c_size_t), value :: i
      type(c_bytes), intent(inout) :: out
      integer(c_int) :: r
    end function
    function c_tgm_file_append(file, json, ptrs, lens, n, hash, threads) bind(c, name='tgm_file_append') result(r)
      import :: c_ptr, c_size_t, c_int32_t, c_int
      type(c_ptr), value :: file, json
      type(c_ptr), intent(in) :: ptrs(*)
      integer(c_size_t), intent(in) :: lens(*)
      integer(c_size_t), value :: n
      type(c_ptr), value :: hash
      integer(c_int32_t), value :: threads
      integer(c_int) :: r
    end function
    subroutine c_tgm_file_close(file) bind(c, name='tgm_file_close')
      import :: c_ptr
      type(c_ptr), value :: file
    end subroutine

    ! ---- streaming encoder
    function c_tgm_streaming_encoder_create(path, json, hash, threads, out) &
        bind(c, name='tgm_streaming_encoder_create') result(r)
      import :: c_ptr, c_int32_t, c_int
      type(c_ptr), value :: path, json, hash
      integer(c_int32_t), value :: threads
      type(c_ptr), intent(inout) :: out
      integer(c_int) :: r
    end function
    function c_tgm_streaming_encoder_write(enc, desc, data, len) bind(c, name='tgm_streaming_encoder_write') result(r)
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: enc, desc, data
      integer(c_size_t), value :: len
      integer(c_int) :: r
    end function
    function c_tgm_streaming_encoder_count(enc) bind(c, name='tgm_streaming_encoder_count') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: enc
      integer(c_size_t) :: n
    end function
    function c_tgm_streaming_encoder_finish(enc) bind(c, name='tgm_streaming_encoder_finish') result(r)
      import :: c_ptr, c_int
      type(c_ptr), value :: enc
      integer(c_int) :: r
    end function
    subroutine c_tgm_streaming_encoder_free(enc) bind(c, name='tgm_streaming_encoder_free')
      import :: c_ptr
      type(c_ptr), value :: enc
    end subroutine

    ! ---- libc
    function c_strlen(s) bind(c, name='strlen') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function
  end interface

  public :: c_tgm_last_error, c_tgm_error_string, c_tgm_set_last_error, c_tgm_bytes_free
  public :: c_tgm_encode, c_tgm_decode
  public :: c_tgm_message_num_objects, c_tgm_object_ndim, c_tgm_object_shape, c_tgm_object_dtype
  public :: c_tgm_object_data, c_tgm_message_metadata, c_tgm_message_free
  public :: c_tgm_metadata_num_objects, c_tgm_metadata_get_string, c_tgm_metadata_get_int
  public :: c_tgm_metadata_get_float, c_tgm_metadata_get, c_tgm_metadata_get_at, c_tgm_metadata_object
  public :: c_tgm_metadata_extra, c_tgm_metadata_reserved, c_tgm_metadata_free
  public :: c_tgm_value_get_type, c_tgm_value_as_bool, c_tgm_value_as_i64, c_tgm_value_as_u64
  public :: c_tgm_value_as_f64, c_tgm_value_as_string, c_tgm_value_as_bytes, c_tgm_value_array_len
  public :: c_tgm_value_array_get, c_tgm_value_map_len, c_tgm_value_map_key_at, c_tgm_value_map_value_at
  public :: c_tgm_value_map_get
  public :: c_tgm_file_open, c_tgm_file_create, c_tgm_file_message_count, c_tgm_file_decode_message
  public :: c_tgm_file_read_message, c_tgm_file_append, c_tgm_file_close
  public :: c_tgm_streaming_encoder_create, c_tgm_streaming_encoder_write, c_tgm_streaming_encoder_count
  public :: c_tgm_streaming_encoder_finish, c_tgm_streaming_encoder_free

contains

  !> `cs` = a NUL-terminated copy of `s`, for a `const char*` argument (pass
  !> c_loc(cs) from a `target` variable). A subroutine, not a function: an
  !> allocatable assignment trips gfortran 12's -Wuninitialized.
  subroutine c_string(s, cs)
    character(len=*), intent(in) :: s
    character(kind=c_char), allocatable, intent(out) :: cs(:)
    integer :: i
    allocate (cs(len(s) + 1))
    do i = 1, len(s)
      cs(i) = s(i:i)
    end do
    cs(len(s) + 1) = c_null_char
  end subroutine c_string

  !> A Fortran copy of a NUL-terminated C string; '' for NULL.
  function f_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    s = f_string_len(p, c_strlen(p))
  end function f_string

  !> A Fortran copy of `n` bytes at `p` (interior NULs kept); '' for NULL.
  function f_string_len(p, n) result(s)
    type(c_ptr), intent(in) :: p
    integer(c_size_t), intent(in) :: n
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer(c_size_t) :: i
    if (.not. c_associated(p) .or. n == 0) then
      s = ''
      return
    end if
    call c_f_pointer(p, chars, [n])
    allocate (character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function f_string_len

  !> Decimal text of an integer, for JSON.
  pure function int_text(i) result(s)
    integer(c_int64_t), intent(in) :: i
    character(len=:), allocatable :: s
    character(len=24) :: buf
    write (buf, '(i0)') i
    s = trim(buf)
  end function int_text

end module tensogram_capi
