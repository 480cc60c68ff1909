! Module `tensogram`: the reference's Fortran API (spec 07 Part F) over our
! C ABI (include/tensogram.h). Thin on purpose: every encode, decode and
! metadata rule lives once, in C++; this module maps Fortran arrays, strings
! and 1-based indices onto the C calls and owns the C handles.
!
! Beyond the reference (spec 07 F.9 lists what it cannot do):
!  * every array generic takes an optional `params`, a JSON object of
!    codec parameters merged into the descriptor (spec 03), so `szip`,
!    `shuffle` and `simple_packing` work from Fortran, e.g.
!    params='{"sp_bits_per_value":16}'; `tensogram_meta%object_json()`
!    builds one;
!  * errors this module detects (dtype/rank mismatch, index out of range,
!    null handles) set the thread's last error too (tgm_set_last_error), so
!    `tensogram_last_error()` and `tensogram_check` say what and where.
!
! Language level: Fortran 2008 (iso_c_binding, contiguous, final,
! type-bound procedures); per-rank specifics come from the cpp templates
! tgm_*.inc (spec 07 F.4).
#define PASTE(a) a
#define CAT(a,b) PASTE(a)b
#define TGM_NAME(f) CAT(CAT(f,TGM_KSFX),TGM_RSFX)
module tensogram
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use tensogram_capi
  implicit none
  private

  ! ---- F.2 constants: the C enums' values (tested against the header).
  integer(c_int), parameter, public :: TGM_ERROR_OK = 0, TGM_ERROR_FRAMING = 1, TGM_ERROR_METADATA = 2, &
    TGM_ERROR_ENCODING = 3, TGM_ERROR_COMPRESSION = 4, TGM_ERROR_OBJECT = 5, TGM_ERROR_IO = 6, &
    TGM_ERROR_HASH_MISMATCH = 7, TGM_ERROR_INVALID_ARG = 8, TGM_ERROR_END_OF_ITER = 9, &
    TGM_ERROR_REMOTE = 10, TGM_ERROR_MISSING_HASH = 11, TGM_ERROR_TIMEOUT = 12, TGM_ERROR_CANCELLED = 13
  integer(c_int), parameter, public :: TGM_VALUE_TYPE_NULL = 0, TGM_VALUE_TYPE_BOOL = 1, &
    TGM_VALUE_TYPE_INT = 2, TGM_VALUE_TYPE_FLOAT = 3, TGM_VALUE_TYPE_STRING = 4, TGM_VALUE_TYPE_BYTES = 5, &
    TGM_VALUE_TYPE_ARRAY = 6, TGM_VALUE_TYPE_MAP = 7

  ! ---- F.3 owning handle types: final + idempotent free/close, no copies.
  type, public :: tensogram_buffer
    private
    type(c_bytes) :: b
  contains
    procedure :: as_array => buffer_as_array
    procedure :: size => buffer_size
    procedure :: free => buffer_free
    procedure, private :: buffer_assign
    generic :: assignment(=) => buffer_assign
    final :: buffer_final
  end type tensogram_buffer

  type, public :: tensogram_message
    private
    type(c_ptr) :: h = c_null_ptr
  contains
    procedure :: free => message_release
    procedure, private :: message_assign
    generic :: assignment(=) => message_assign
    final :: message_final
  end type tensogram_message

  type, public :: tensogram_file
    private
    type(c_ptr) :: h = c_null_ptr
  contains
    procedure :: close => file_release
    procedure, private :: file_assign
    generic :: assignment(=) => file_assign
    final :: file_final
  end type tensogram_file

  type, public :: tensogram_metadata
    private
    type(c_ptr) :: h = c_null_ptr
  contains
    procedure :: free => metadata_release
    procedure, private :: metadata_assign
    generic :: assignment(=) => metadata_assign
    final :: metadata_final
  end type tensogram_metadata

  type, public :: tensogram_streaming_encoder
    private
    type(c_ptr) :: h = c_null_ptr
  contains
    !> Releases without finishing: an unfinished message never reaches its
    !> destination (the encoder writes to a temporary file renamed by finish).
    procedure :: free => encoder_release
    procedure, private :: encoder_assign
    generic :: assignment(=) => encoder_assign
    final :: encoder_final
  end type tensogram_streaming_encoder

  !> A borrowed cursor into a tensogram_metadata (F.3); 1-based indices.
  type, public :: tensogram_value
    private
    type(c_ptr) :: p = c_null_ptr
  contains
    procedure :: is_present => value_is_present
    procedure :: kind => value_kind
    procedure :: as_int => value_as_int
    procedure :: as_uint => value_as_uint
    procedure :: as_float => value_as_float
    procedure :: as_bool => value_as_bool
    procedure :: as_string => value_as_string
    procedure :: as_bytes => value_as_bytes
    procedure :: len => value_len
    procedure :: elem => value_elem
    procedure :: key => value_key
    procedure :: value => value_value
    procedure :: get => value_get
  end type tensogram_value

  !> A JSON object under construction (F.3): `base_json()` for
  !> metadata_json=, `object_json()` (ours) for params=.
  type, public :: tensogram_meta
    private
    character(len=:), allocatable :: members
  contains
    procedure :: add_string => meta_add_string
    procedure :: add_int => meta_add_int
    procedure :: add_real => meta_add_real
    procedure :: base_json => meta_base_json
    procedure :: object_json => meta_object_json
  end type tensogram_meta

  ! ---- F.4 generics (dtype x rank)
  public :: tensogram_encode, tensogram_to_array, tensogram_file_append, tensogram_streaming_encoder_write

  interface tensogram_encode
#define TGM_FAMILY encode_
#define TGM_TEMPLATE "tgm_iface.inc"
#include "tgm_kinds.inc"
#undef TGM_FAMILY
  end interface tensogram_encode
  interface tensogram_to_array
#define TGM_FAMILY to_array_
#include "tgm_kinds.inc"
#undef TGM_FAMILY
  end interface tensogram_to_array
  interface tensogram_file_append
#define TGM_FAMILY append_
#include "tgm_kinds.inc"
#undef TGM_FAMILY
  end interface tensogram_file_append
  interface tensogram_streaming_encoder_write
#define TGM_FAMILY stream_write_
#include "tgm_kinds.inc"
#undef TGM_FAMILY
  end interface tensogram_streaming_encoder_write
#undef TGM_TEMPLATE

  ! ---- F.5 other procedures (tensogram_metadata.F90 holds the metadata ones)
  public :: tensogram_decode, tensogram_num_objects, tensogram_object_ndim, tensogram_object_shape
  public :: tensogram_object_dtype, tensogram_file_open, tensogram_file_create, tensogram_file_message_count
  public :: tensogram_file_decode_message, tensogram_file_read_message, tensogram_message_metadata
  public :: tensogram_streaming_encoder_create, tensogram_streaming_encoder_finish
  public :: tensogram_streaming_encoder_count, tensogram_strerror, tensogram_last_error, tensogram_check
  public :: tensogram_metadata_get_string, tensogram_metadata_get_int, tensogram_metadata_get_float
  public :: tensogram_metadata_num_objects, tensogram_metadata_has, tensogram_metadata_get
  public :: tensogram_metadata_try_get_int, tensogram_metadata_try_get_float
  public :: tensogram_metadata_try_get_string, tensogram_metadata_try_get_bool
  public :: tensogram_metadata_object, tensogram_metadata_extra, tensogram_metadata_reserved

  interface
    ! Metadata and cursor procedures: submodule tensogram_metadata_impl.
    module function tensogram_metadata_get_string(meta, key) result(s)
      type(tensogram_metadata), intent(in) :: meta
      character(len=*), intent(in) :: key
      character(len=:), allocatable :: s
    end function
    module function tensogram_metadata_get_int(meta, key, default_val) result(v)
      type(tensogram_metadata), intent(in) :: meta
      character(len=*), intent(in) :: key
      integer(c_int64_t), intent(in) :: default_val
      integer(c_int64_t) :: v
    end function
    module function tensogram_metadata_get_float(meta, key, default_val) result(v)
      type(tensogram_metadata), intent(in) :: meta
      character(len=*), intent(in) :: key
      real(c_double), intent(in) :: default_val
      real(c_double) :: v
    end function
    module integer function tensogram_metadata_num_objects(meta)
      type(tensogram_metadata), intent(in) :: meta
    end function
    module logical function tensogram_metadata_has(meta, key, obj_index)
      type(tensogram_metadata), intent(in) :: meta
      character(len=*), intent(in) :: key
      integer, intent(in), optional :: obj_index
    end function
    module function tensogram_metadata_get(meta, key, obj_index) result(v)
      type(tensogram_metadata), intent(in) :: meta
      character(len=*), intent(in) :: key
      integer, intent(in), optional :: obj_index
      type(tensogram_value) :: v
    end function
    module logical function tensogram_metadata_try_get_int(meta, key, value, obj_index)
      type(tensogram_metadata), intent(in) :: meta
      character(len=*), intent(in) :: key
      integer(c_int64_t), intent(out) :: value
      integer, intent(in), optional :: obj_index
    end function
    module logical function tensogram_metadata_try_get_float(meta, key, value, obj_index)
      type(tensogram_metadata), intent(in) :: meta
      character(len=*), intent(in) :: key
      real(c_double), intent(out) :: value
      integer, intent(in), optional :: obj_index
    end function
    module logical function tensogram_metadata_try_get_string(meta, key, value, obj_index)
      type(tensogram_metadata), intent(in) :: meta
      character(len=*), intent(in) :: key
      character(len=:), allocatable, intent(out) :: value
      integer, intent(in), optional :: obj_index
    end function
    module logical function tensogram_metadata_try_get_bool(meta, key, value, obj_index)
      type(tensogram_metadata), intent(in) :: meta
      character(len=*), intent(in) :: key
      logical, intent(out) :: value
      integer, intent(in), optional :: obj_index
    end function
    module function tensogram_metadata_object(meta, obj_index) result(v)
      type(tensogram_metadata), intent(in) :: meta
      integer, intent(in) :: obj_index
      type(tensogram_value) :: v
    end function
    module function tensogram_metadata_extra(meta) result(v)
      type(tensogram_metadata), intent(in) :: meta
      type(tensogram_value) :: v
    end function
    module function tensogram_metadata_reserved(meta) result(v)
      type(tensogram_metadata), intent(in) :: meta
      type(tensogram_value) :: v
    end function
    module logical function value_is_present(self)
      class(tensogram_value), intent(in) :: self
    end function
    module integer(c_int) function value_kind(self)
      class(tensogram_value), intent(in) :: self
    end function
    module logical function value_as_int(self, val)
      class(tensogram_value), intent(in) :: self
      integer(c_int64_t), intent(out) :: val
    end function
    module logical function value_as_uint(self, val)
      class(tensogram_value), intent(in) :: self
      integer(c_int64_t), intent(out) :: val
    end function
    module logical function value_as_float(self, val)
      class(tensogram_value), intent(in) :: self
      real(c_double), intent(out) :: val
    end function
    module logical function value_as_bool(self, val)
      class(tensogram_value), intent(in) :: self
      logical, intent(out) :: val
    end function
    module logical function value_as_string(self, val)
      class(tensogram_value), intent(in) :: self
      character(len=:), allocatable, intent(out) :: val
    end function
    module logical function value_as_bytes(self, val)
      class(tensogram_value), intent(in) :: self
      integer(c_int8_t), allocatable, intent(out) :: val(:)
    end function
    module integer function value_len(self)
      class(tensogram_value), intent(in) :: self
    end function
    module function value_elem(self, i) result(v)
      class(tensogram_value), intent(in) :: self
      integer, intent(in) :: i
      type(tensogram_value) :: v
    end function
    module function value_key(self, i, found) result(k)
      class(tensogram_value), intent(in) :: self
      integer, intent(in) :: i
      logical, intent(out), optional :: found
      character(len=:), allocatable :: k
    end function
    module function value_value(self, i) result(v)
      class(tensogram_value), intent(in) :: self
      integer, intent(in) :: i
      type(tensogram_value) :: v
    end function
    module function value_get(self, key) result(v)
      class(tensogram_value), intent(in) :: self
      character(len=*), intent(in) :: key
      type(tensogram_value) :: v
    end function
    module subroutine meta_add_string(self, key, val)
      class(tensogram_meta), intent(inout) :: self
      character(len=*), intent(in) :: key, val
    end subroutine
    module subroutine meta_add_int(self, key, val)
      class(tensogram_meta), intent(inout) :: self
      character(len=*), intent(in) :: key
      integer(c_int64_t), intent(in) :: val
    end subroutine
    module subroutine meta_add_real(self, key, val)
      class(tensogram_meta), intent(inout) :: self
      character(len=*), intent(in) :: key
      real(c_double), intent(in) :: val
    end subroutine
    module function meta_base_json(self) result(js)
      class(tensogram_meta), intent(in) :: self
      character(len=:), allocatable :: js
    end function
    module function meta_object_json(self) result(js)
      class(tensogram_meta), intent(in) :: self
      character(len=:), allocatable :: js
    end function
    module function json_string(s) result(js)
      character(len=*), intent(in) :: s
      character(len=:), allocatable :: js
    end function
  end interface

contains

  ! ---- errors --------------------------------------------------------------

  !> tgm_error_string: the code's fixed text.
  function tensogram_strerror(err) result(s)
    integer(c_int), intent(in) :: err
    character(len=:), allocatable :: s
    s = f_string(c_tgm_error_string(err))
  end function tensogram_strerror

  !> The thread's last error text ('' if none; not cleared by success).
  function tensogram_last_error() result(s)
    character(len=:), allocatable :: s
    s = f_string(c_tgm_last_error())
  end function tensogram_last_error

  !> No-op on success; otherwise `tensogram: [<context>: ]<detail>` on
  !> stderr and `error stop 1` (F.5).
  subroutine tensogram_check(err, context)
    integer(c_int), intent(in) :: err
    character(len=*), intent(in), optional :: context
    character(len=:), allocatable :: detail
    if (err == TGM_ERROR_OK) return
    detail = tensogram_last_error()
    if (len(detail) == 0) detail = tensogram_strerror(err)
    if (present(context)) then
      write (error_unit, '(a)') 'tensogram: '//context//': '//detail
    else
      write (error_unit, '(a)') 'tensogram: '//detail
    end if
    error stop 1
  end subroutine tensogram_check

  !> Records an error this module found (tgm_set_last_error) and returns it.
  function fail(code, text) result(err)
    integer(c_int), intent(in) :: code
    character(len=*), intent(in) :: text
    integer(c_int) :: err
    character(kind=c_char), allocatable, target :: ctext(:)
    call c_string(text, ctext)
    err = c_tgm_set_last_error(code, c_loc(ctext))
  end function fail

  !> Text of a default integer, for messages.
  function itoa(i) result(s)
    integer, intent(in) :: i
    character(len=:), allocatable :: s
    s = int_text(int(i, c_int64_t))
  end function itoa

  !> `c_loc(cs)`, or NULL for a zero-size array (an absent C string).
  function ptr_or_null(cs) result(p)
    character(kind=c_char), intent(in), target :: cs(:)
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(cs) > 0) p = c_loc(cs)
  end function ptr_or_null

  ! ---- JSON of one object (F.6) -------------------------------------------

  !> `,<members>` of a JSON object given as `{...}` or as bare members;
  !> '' when blank.
  function json_members(text) result(m)
    character(len=*), intent(in) :: text
    character(len=:), allocatable :: m
    integer :: n
    m = trim(adjustl(text))
    n = len(m)
    if (n >= 2) then
      if (m(1:1) == '{' .and. m(n:n) == '}') m = trim(adjustl(m(2:n - 1)))
    end if
    if (len(m) > 0) m = ','//m
  end function json_members

  function stage_name(name) result(js)
    character(len=*), intent(in), optional :: name
    character(len=:), allocatable :: js
    if (present(name)) then
      js = json_string(trim(name))
    else
      js = '"none"'
    end if
  end function stage_name

  !> "little" or "big", the byte order of this machine's numbers.
  function host_byte_order() result(s)
    character(len=:), allocatable :: s
    integer(c_int8_t) :: bytes(2)
    bytes = transfer(1_c_int16_t, bytes)
    if (bytes(1) == 1) then
      s = '"little"'
    else
      s = '"big"'
    end if
  end function host_byte_order

  !> The descriptor of a Fortran array with extents `ext` (F.6): shape
  !> reversed, C-contiguous element strides for that shape.
  function descriptor_json(ext, dtype, encoding, filter, compression, params) result(js)
    integer(c_int64_t), intent(in) :: ext(:)
    character(len=*), intent(in) :: dtype
    character(len=*), intent(in), optional :: encoding, filter, compression, params
    character(len=:), allocatable :: js, shape_txt, strides_txt
    integer(c_int64_t) :: stride
    integer :: j, k
    k = size(ext)
    shape_txt = ''
    strides_txt = ''
    stride = 1
    do j = 1, k
      ! C dimension k-j holds Fortran dimension j; its stride is the product
      ! of the Fortran extents before it.
      shape_txt = int_text(ext(j))//merge(',', ' ', j > 1)//shape_txt
      strides_txt = int_text(stride)//merge(',', ' ', j > 1)//strides_txt
      stride = stride*ext(j)
    end do
    js = '{"type":"ntensor","ndim":'//itoa(k)//',"shape":['//trim(shape_txt)//'],"strides":['// &
         trim(strides_txt)//'],"dtype":"'//dtype//'","byte_order":'//host_byte_order()// &
         ',"encoding":'//stage_name(encoding)//',"filter":'//stage_name(filter)// &
         ',"compression":'//stage_name(compression)
    if (present(params)) js = js//json_members(params)
    js = js//'}'
  end function descriptor_json

  !> The C string for a `hash=` argument (F.6): absent -> "xxh3", blank ->
  !> a zero-size array, passed as NULL (no hash), else the name as given.
  subroutine hash_arg(hash, cs)
    character(len=*), intent(in), optional :: hash
    character(kind=c_char), allocatable, intent(out) :: cs(:)
    if (.not. present(hash)) then
      call c_string('xxh3', cs)
    else if (len_trim(hash) == 0) then
      allocate (cs(0))
    else
      call c_string(trim(hash), cs)
    end if
  end subroutine hash_arg

  function message_json(descriptor, metadata_json) result(js)
    character(len=*), intent(in) :: descriptor
    character(len=*), intent(in), optional :: metadata_json
    character(len=:), allocatable :: js
    js = '{"descriptors":['//descriptor//']'
    if (present(metadata_json)) js = js//json_members(metadata_json)
    js = js//'}'
  end function message_json

  ! ---- encode (the generics' specifics call these) -------------------------

  subroutine encode_object(data, nbytes, ext, dtype, buf, err, metadata_json, hash, encoding, filter, &
                           compression, params)
    type(c_ptr), intent(in) :: data
    integer(c_size_t), intent(in) :: nbytes
    integer(c_int64_t), intent(in) :: ext(:)
    character(len=*), intent(in) :: dtype
    type(tensogram_buffer), intent(inout) :: buf
    integer(c_int), intent(out) :: err
    character(len=*), intent(in), optional :: metadata_json, hash, encoding, filter, compression, params
    character(kind=c_char), allocatable, target :: cjson(:), chash(:)
    type(c_ptr) :: ptrs(1)
    integer(c_size_t) :: lens(1)
    call c_string(message_json(descriptor_json(ext, dtype, encoding, filter, compression, params), &
                               metadata_json), cjson)
    call hash_arg(hash, chash)
    ptrs(1) = data
    lens(1) = nbytes
    err = c_tgm_encode(c_loc(cjson), ptrs, lens, 1_c_size_t, ptr_or_null(chash), 0_c_int32_t, buf%b)
  end subroutine encode_object

  subroutine append_object(file, data, nbytes, ext, dtype, err, metadata_json, hash, encoding, filter, &
                           compression, params)
    type(tensogram_file), intent(inout) :: file
    type(c_ptr), intent(in) :: data
    integer(c_size_t), intent(in) :: nbytes
    integer(c_int64_t), intent(in) :: ext(:)
    character(len=*), intent(in) :: dtype
    integer(c_int), intent(out) :: err
    character(len=*), intent(in), optional :: metadata_json, hash, encoding, filter, compression, params
    character(kind=c_char), allocatable, target :: cjson(:), chash(:)
    type(c_ptr) :: ptrs(1)
    integer(c_size_t) :: lens(1)
    call c_string(message_json(descriptor_json(ext, dtype, encoding, filter, compression, params), &
                               metadata_json), cjson)
    call hash_arg(hash, chash)
    ptrs(1) = data
    lens(1) = nbytes
    err = c_tgm_file_append(file%h, c_loc(cjson), ptrs, lens, 1_c_size_t, ptr_or_null(chash), 0_c_int32_t)
  end subroutine append_object

  subroutine stream_write_object(enc, data, nbytes, ext, dtype, err, encoding, filter, compression, params)
    type(tensogram_streaming_encoder), intent(inout) :: enc
    type(c_ptr), intent(in) :: data
    integer(c_size_t), intent(in) :: nbytes
    integer(c_int64_t), intent(in) :: ext(:)
    character(len=*), intent(in) :: dtype
    integer(c_int), intent(out) :: err
    character(len=*), intent(in), optional :: encoding, filter, compression, params
    character(kind=c_char), allocatable, target :: cdesc(:)
    call c_string(descriptor_json(ext, dtype, encoding, filter, compression, params), cdesc)
    err = c_tgm_streaming_encoder_write(enc%h, c_loc(cdesc), data, nbytes)
  end subroutine stream_write_object

  ! ---- decode -----------------------------------------------------------------

  !> tgm_decode with threads 0 (F.5); masks are always restored.
  subroutine tensogram_decode(wire, msg, err, verify_hash, native_byte_order)
    integer(c_int8_t), intent(in), target, contiguous :: wire(:)
    type(tensogram_message), intent(out) :: msg
    integer(c_int), intent(out) :: err
    logical, intent(in), optional :: verify_hash, native_byte_order
    type(c_ptr) :: p
    p = c_null_ptr  ! an empty buffer is the C layer's "null argument" error
    if (size(wire) > 0) p = c_loc(wire)
    err = c_tgm_decode(p, size(wire, kind=c_size_t), flag(native_byte_order, .true.), 0_c_int32_t, &
                       flag(verify_hash, .false.), msg%h)
  end subroutine tensogram_decode

  pure integer(c_int32_t) function flag(opt, default)
    logical, intent(in), optional :: opt
    logical, intent(in) :: default
    flag = merge(1_c_int32_t, 0_c_int32_t, default)
    if (present(opt)) flag = merge(1_c_int32_t, 0_c_int32_t, opt)
  end function flag

  integer function tensogram_num_objects(msg)
    type(tensogram_message), intent(in) :: msg
    tensogram_num_objects = int(c_tgm_message_num_objects(msg%h))
  end function tensogram_num_objects

  !> 0-based C index of 1-based `iobj`, or -1 when out of range.
  integer(c_size_t) function c_index(msg, iobj)
    type(tensogram_message), intent(in) :: msg
    integer, intent(in) :: iobj
    integer :: n
    n = tensogram_num_objects(msg)
    c_index = -1
    if (iobj >= 1 .and. iobj <= n) c_index = int(iobj - 1, c_size_t)
  end function c_index

  integer function tensogram_object_ndim(msg, iobj)
    type(tensogram_message), intent(in) :: msg
    integer, intent(in) :: iobj
    tensogram_object_ndim = 0
    if (c_index(msg, iobj) >= 0) tensogram_object_ndim = int(c_tgm_object_ndim(msg%h, c_index(msg, iobj)))
  end function tensogram_object_ndim

  !> Extents in Fortran order: the wire shape reversed (F.6).
  function tensogram_object_shape(msg, iobj) result(ext)
    type(tensogram_message), intent(in) :: msg
    integer, intent(in) :: iobj
    integer(c_int64_t), allocatable :: ext(:)
    integer(c_int64_t), pointer :: wire_shape(:)
    integer :: k
    k = tensogram_object_ndim(msg, iobj)
    allocate (ext(k))
    if (k == 0) return
    call c_f_pointer(c_tgm_object_shape(msg%h, c_index(msg, iobj)), wire_shape, [k])
    ext = wire_shape(k:1:-1)
  end function tensogram_object_shape

  function tensogram_object_dtype(msg, iobj) result(s)
    type(tensogram_message), intent(in) :: msg
    integer, intent(in) :: iobj
    character(len=:), allocatable :: s
    s = ''
    if (c_index(msg, iobj) >= 0) s = f_string(c_tgm_object_dtype(msg%h, c_index(msg, iobj)))
  end function tensogram_object_dtype

  !> The checks of tensogram_to_array (F.6) and the Fortran extents of the
  !> object, bounded by its decoded length before anything is allocated.
  subroutine object_layout(msg, iobj, dtype, rank, elem_bytes, ext, err)
    type(tensogram_message), intent(in) :: msg
    integer, intent(in) :: iobj, rank
    character(len=*), intent(in) :: dtype
    integer(c_size_t), intent(in) :: elem_bytes
    integer(c_int64_t), allocatable, intent(out) :: ext(:)
    integer(c_int), intent(out) :: err
    character(len=*), parameter :: where = 'tensogram_to_array: '
    character(len=:), allocatable :: actual
    integer(c_size_t) :: nbytes, count
    type(c_ptr) :: data
    integer :: j
    if (.not. c_associated(msg%h)) then
      err = fail(TGM_ERROR_OBJECT, where//'the message handle is null (not decoded, or freed)')
      return
    end if
    if (c_index(msg, iobj) < 0) then
      err = fail(TGM_ERROR_OBJECT, where//'object index '//itoa(iobj)//' is out of range (1..'// &
                 itoa(tensogram_num_objects(msg))//')')
      return
    end if
    actual = tensogram_object_dtype(msg, iobj)
    if (actual /= dtype) then
      err = fail(TGM_ERROR_OBJECT, where//'object '//itoa(iobj)//' has dtype '//actual// &
                 ', the array is '//dtype)
      return
    end if
    if (tensogram_object_ndim(msg, iobj) /= rank) then
      err = fail(TGM_ERROR_OBJECT, where//'object '//itoa(iobj)//' has rank '// &
                 itoa(tensogram_object_ndim(msg, iobj))//', the array has rank '//itoa(rank))
      return
    end if
    ext = tensogram_object_shape(msg, iobj)
    data = c_tgm_object_data(msg%h, c_index(msg, iobj), nbytes)
    ! Element count, refusing any product the decoded length cannot hold
    ! (negative means the u64 extent did not fit in an i64).
    count = 1
    if (any(ext < 0)) then
      count = -1
    else if (any(ext == 0)) then
      count = 0
    else
      do j = 1, rank
        if (ext(j) > nbytes/elem_bytes/count) then
          count = -1
          exit
        end if
        count = count*ext(j)
      end do
    end if
    if (count < 0 .or. count*elem_bytes /= nbytes .or. (nbytes > 0 .and. .not. c_associated(data))) then
      err = fail(TGM_ERROR_OBJECT, where//'object '//itoa(iobj)//' holds '//int_text(int(nbytes, c_int64_t))// &
                 ' decoded bytes, which its shape does not account for')
      return
    end if
    err = TGM_ERROR_OK
  end subroutine object_layout

  !> Copies the decoded bytes of object `iobj` (checked by object_layout).
  subroutine object_copy(msg, iobj, dest, nbytes, err)
    type(tensogram_message), intent(in) :: msg
    integer, intent(in) :: iobj
    type(c_ptr), intent(in) :: dest
    integer(c_size_t), intent(in) :: nbytes
    integer(c_int), intent(out) :: err
    integer(c_int8_t), pointer :: from(:), to(:)
    integer(c_size_t) :: have
    type(c_ptr) :: data
    data = c_tgm_object_data(msg%h, c_index(msg, iobj), have)
    if (have /= nbytes) then
      err = fail(TGM_ERROR_OBJECT, 'tensogram_to_array: object '//itoa(iobj)//' changed size')
      return
    end if
    err = TGM_ERROR_OK
    if (nbytes == 0) return
    call c_f_pointer(data, from, [nbytes])
    call c_f_pointer(dest, to, [nbytes])
    to = from
  end subroutine object_copy

  subroutine tensogram_message_metadata(msg, meta, err)
    type(tensogram_message), intent(in) :: msg
    type(tensogram_metadata), intent(out) :: meta
    integer(c_int), intent(out) :: err
    err = c_tgm_message_metadata(msg%h, meta%h)
  end subroutine tensogram_message_metadata

  ! ---- files ------------------------------------------------------------------

  subroutine tensogram_file_open(path, file, err)
    character(len=*), intent(in) :: path
    type(tensogram_file), intent(out) :: file
    integer(c_int), intent(out) :: err
    character(kind=c_char), allocatable, target :: cpath(:)
    call c_string(trim(path), cpath)
    err = c_tgm_file_open(c_loc(cpath), file%h)
  end subroutine tensogram_file_open

  subroutine tensogram_file_create(path, file, err)
    character(len=*), intent(in) :: path
    type(tensogram_file), intent(out) :: file
    integer(c_int), intent(out) :: err
    character(kind=c_char), allocatable, target :: cpath(:)
    call c_string(trim(path), cpath)
    err = c_tgm_file_create(c_loc(cpath), file%h)
  end subroutine tensogram_file_create

  subroutine tensogram_file_message_count(file, count, err)
    type(tensogram_file), intent(in) :: file
    integer, intent(out) :: count
    integer(c_int), intent(out) :: err
    integer(c_size_t) :: n
    n = 0
    err = c_tgm_file_message_count(file%h, n)
    count = int(n)
  end subroutine tensogram_file_message_count

  !> 0-based message index, or an error for index < 1 (past-the-end
  !> indices are the C layer's TGM_ERROR_FRAMING).
  function message_index(index, where, err) result(i)
    integer, intent(in) :: index
    character(len=*), intent(in) :: where
    integer(c_int), intent(out) :: err
    integer(c_size_t) :: i
    err = TGM_ERROR_OK
    i = int(max(index, 1) - 1, c_size_t)
    if (index < 1) err = fail(TGM_ERROR_FRAMING, where//': message index '//itoa(index)// &
                              ' is out of range (indices start at 1)')
  end function message_index

  subroutine tensogram_file_decode_message(file, index, msg, err, verify_hash, native_byte_order)
    type(tensogram_file), intent(in) :: file
    integer, intent(in) :: index
    type(tensogram_message), intent(out) :: msg
    integer(c_int), intent(out) :: err
    logical, intent(in), optional :: verify_hash, native_byte_order
    integer(c_size_t) :: i
    i = message_index(index, 'tensogram_file_decode_message', err)
    if (err /= TGM_ERROR_OK) return
    err = c_tgm_file_decode_message(file%h, i, flag(native_byte_order, .true.), 0_c_int32_t, &
                                    flag(verify_hash, .false.), msg%h)
  end subroutine tensogram_file_decode_message

  subroutine tensogram_file_read_message(file, index, buf, err)
    type(tensogram_file), intent(in) :: file
    integer, intent(in) :: index
    type(tensogram_buffer), intent(out) :: buf
    integer(c_int), intent(out) :: err
    integer(c_size_t) :: i
    i = message_index(index, 'tensogram_file_read_message', err)
    if (err /= TGM_ERROR_OK) return
    err = c_tgm_file_read_message(file%h, i, buf%b)
  end subroutine tensogram_file_read_message

  ! ---- streaming encoder ------------------------------------------------------

  !> `metadata_json` is a complete JSON object passed verbatim (default {}).
  subroutine tensogram_streaming_encoder_create(path, enc, err, metadata_json, hash)
    character(len=*), intent(in) :: path
    type(tensogram_streaming_encoder), intent(out) :: enc
    integer(c_int), intent(out) :: err
    character(len=*), intent(in), optional :: metadata_json, hash
    character(kind=c_char), allocatable, target :: cpath(:), cjson(:), chash(:)
    call c_string(trim(path), cpath)
    if (present(metadata_json)) then
      call c_string(metadata_json, cjson)
    else
      call c_string('{}', cjson)
    end if
    call hash_arg(hash, chash)
    err = c_tgm_streaming_encoder_create(c_loc(cpath), c_loc(cjson), ptr_or_null(chash), 0_c_int32_t, enc%h)
  end subroutine tensogram_streaming_encoder_create

  !> Writes the footer and closes the file; the handle still needs free().
  subroutine tensogram_streaming_encoder_finish(enc, err)
    type(tensogram_streaming_encoder), intent(inout) :: enc
    integer(c_int), intent(out) :: err
    err = c_tgm_streaming_encoder_finish(enc%h)
  end subroutine tensogram_streaming_encoder_finish

  integer function tensogram_streaming_encoder_count(enc)
    type(tensogram_streaming_encoder), intent(in) :: enc
    tensogram_streaming_encoder_count = int(c_tgm_streaming_encoder_count(enc%h))
  end function tensogram_streaming_encoder_count

  ! ---- handle types: release, finalize, refuse copies (tgm_handle.inc) ----------

  subroutine buffer_as_array(self, out)
    class(tensogram_buffer), intent(in) :: self
    integer(c_int8_t), allocatable, intent(out) :: out(:)
    integer(c_int8_t), pointer :: bytes(:)
    allocate (out(self%b%len))
    if (self%b%len == 0 .or. .not. c_associated(self%b%data)) return
    call c_f_pointer(self%b%data, bytes, [self%b%len])
    out = bytes
  end subroutine buffer_as_array

  integer(c_size_t) function buffer_size(self)
    class(tensogram_buffer), intent(in) :: self
    buffer_size = self%b%len
  end function buffer_size

  subroutine buffer_free(self)
    class(tensogram_buffer), intent(inout) :: self
    if (c_associated(self%b%data)) call c_tgm_bytes_free(self%b)
    self%b = c_bytes()
  end subroutine buffer_free

  subroutine buffer_final(self)
    type(tensogram_buffer), intent(inout) :: self
    call self%free()
  end subroutine buffer_final

  subroutine buffer_assign(lhs, rhs)
    class(tensogram_buffer), intent(inout) :: lhs
    type(tensogram_buffer), intent(in) :: rhs
    if (.false.) lhs%b = rhs%b
    error stop 'tensogram_buffer is non-copyable: pass it by reference'
  end subroutine buffer_assign

#define TGM_HANDLE tensogram_message
#define TGM_HANDLE_TEXT 'tensogram_message'
#define TGM_HANDLE_C_FREE c_tgm_message_free
#define TGM_HANDLE_PREFIX message_
#include "tgm_handle.inc"
#define TGM_HANDLE tensogram_file
#define TGM_HANDLE_TEXT 'tensogram_file'
#define TGM_HANDLE_C_FREE c_tgm_file_close
#define TGM_HANDLE_PREFIX file_
#include "tgm_handle.inc"
#define TGM_HANDLE tensogram_metadata
#define TGM_HANDLE_TEXT 'tensogram_metadata'
#define TGM_HANDLE_C_FREE c_tgm_metadata_free
#define TGM_HANDLE_PREFIX metadata_
#include "tgm_handle.inc"
#define TGM_HANDLE tensogram_streaming_encoder
#define TGM_HANDLE_TEXT 'tensogram_streaming_encoder'
#define TGM_HANDLE_C_FREE c_tgm_streaming_encoder_free
#define TGM_HANDLE_PREFIX encoder_
#include "tgm_handle.inc"

  ! ---- the generics' specifics -------------------------------------------------

#define TGM_TEMPLATE "tgm_encode.inc"
#include "tgm_kinds.inc"
#undef TGM_TEMPLATE
#define TGM_TEMPLATE "tgm_to_array.inc"
#include "tgm_kinds.inc"
#undef TGM_TEMPLATE
#define TGM_TEMPLATE "tgm_append.inc"
#include "tgm_kinds.inc"
#undef TGM_TEMPLATE
#define TGM_TEMPLATE "tgm_stream_write.inc"
#include "tgm_kinds.inc"
#undef TGM_TEMPLATE

end module tensogram
