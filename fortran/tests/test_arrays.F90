! Fortran tests of the array side of module `tensogram` (spec 07 F.2, F.4,
! F.6): constants, encode/decode/to_array for every kind at ranks 0..7, the
! column-major contract, codec parameters (ours), hashes, refusals and
! bad input. Arguments: <fixtures dir> <work dir>.
program test_arrays
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
  use tensogram
  use test_support
  implicit none

  interface
    subroutine tgm_test_error_codes(out) bind(c)
      import :: c_int
      integer(c_int), intent(out) :: out(14)
    end subroutine
    subroutine tgm_test_value_types(out) bind(c)
      import :: c_int
      integer(c_int), intent(out) :: out(8)
    end subroutine
  end interface

  call test_constants()
  call test_every_kind()
  call test_ranks()
  call test_memory_order()
  call test_to_array_refusals()
  call test_codec_params()
  call test_hash_and_non_finite()
  call test_buffer()
  call test_decode_bad_input()
  call test_handle_reuse()
  call finish('test_arrays')

contains

  subroutine decode_buffer(buf, msg, err)
    type(tensogram_buffer), intent(in) :: buf
    type(tensogram_message), intent(out) :: msg
    integer(c_int), intent(out) :: err
    integer(c_int8_t), allocatable :: bytes(:)
    call buf%as_array(bytes)
    call tensogram_decode(bytes, msg, err, verify_hash=.true.)
  end subroutine decode_buffer

  subroutine test_constants()
    integer(c_int) :: codes(14), types(8)
    call tgm_test_error_codes(codes)
    call tgm_test_value_types(types)
    call check(all(codes == [TGM_ERROR_OK, TGM_ERROR_FRAMING, TGM_ERROR_METADATA, TGM_ERROR_ENCODING, &
                             TGM_ERROR_COMPRESSION, TGM_ERROR_OBJECT, TGM_ERROR_IO, TGM_ERROR_HASH_MISMATCH, &
                             TGM_ERROR_INVALID_ARG, TGM_ERROR_END_OF_ITER, TGM_ERROR_REMOTE, &
                             TGM_ERROR_MISSING_HASH, TGM_ERROR_TIMEOUT, TGM_ERROR_CANCELLED]), &
               'TGM_ERROR_* equal the C header')
    call check(all(types == [TGM_VALUE_TYPE_NULL, TGM_VALUE_TYPE_BOOL, TGM_VALUE_TYPE_INT, &
                             TGM_VALUE_TYPE_FLOAT, TGM_VALUE_TYPE_STRING, TGM_VALUE_TYPE_BYTES, &
                             TGM_VALUE_TYPE_ARRAY, TGM_VALUE_TYPE_MAP]), 'TGM_VALUE_TYPE_* equal the C header')
    call check(tensogram_strerror(TGM_ERROR_IO) == 'I/O error' .or. len(tensogram_strerror(TGM_ERROR_IO)) > 0, &
               'tensogram_strerror gives text')
    call check(tensogram_strerror(99_c_int) == 'unknown error', 'tensogram_strerror of an unknown code')
  end subroutine test_constants

  !> Each of the four kinds, as a scalar and a rank-2 array.
  subroutine test_every_kind()
    real(c_float) :: f2(3, 2), f0
    real(c_double) :: d2(3, 2), d0
    integer(c_int32_t) :: i2(3, 2), i0
    integer(c_int64_t) :: l2(3, 2), l0
    real(c_float), allocatable :: f2o(:, :), f0o
    real(c_double), allocatable :: d2o(:, :), d0o
    integer(c_int32_t), allocatable :: i2o(:, :), i0o
    integer(c_int64_t), allocatable :: l2o(:, :), l0o
    type(tensogram_buffer) :: buf
    type(tensogram_message) :: msg
    integer(c_int) :: err
    integer :: k

    f2 = reshape([(real(k, c_float)*1.5_c_float, k=1, 6)], [3, 2])
    d2 = reshape([(real(k, c_double)/3.0_c_double, k=1, 6)], [3, 2])
    i2 = reshape([(-k*1000000, k=1, 6)], [3, 2])
    l2 = reshape([(int(k, c_int64_t)*3000000000_c_int64_t, k=1, 6)], [3, 2])
    f0 = -2.5_c_float
    d0 = huge(1.0_c_double)
    i0 = -huge(1_c_int32_t)
    l0 = -huge(1_c_int64_t)

    call tensogram_encode(f2, buf, err)
    call check_err(err, TGM_ERROR_OK, 'encode float32 rank 2')
    call decode_buffer(buf, msg, err)
    call check_err(err, TGM_ERROR_OK, 'decode float32 rank 2')
    call check(tensogram_object_dtype(msg, 1) == 'float32', 'float32 dtype')
    call tensogram_to_array(msg, 1, f2o, err)
    call check_err(err, TGM_ERROR_OK, 'to_array float32 rank 2')
    call check(all(shape(f2o) == [3, 2]) .and. all(f2o == f2), 'float32 rank 2 round trip')

    call tensogram_encode(d2, buf, err)
    call decode_buffer(buf, msg, err)
    call check(tensogram_object_dtype(msg, 1) == 'float64', 'float64 dtype')
    call tensogram_to_array(msg, 1, d2o, err)
    call check(err == TGM_ERROR_OK .and. all(d2o == d2), 'float64 rank 2 round trip')

    call tensogram_encode(i2, buf, err)
    call decode_buffer(buf, msg, err)
    call check(tensogram_object_dtype(msg, 1) == 'int32', 'int32 dtype')
    call tensogram_to_array(msg, 1, i2o, err)
    call check(err == TGM_ERROR_OK .and. all(i2o == i2), 'int32 rank 2 round trip')

    call tensogram_encode(l2, buf, err)
    call decode_buffer(buf, msg, err)
    call check(tensogram_object_dtype(msg, 1) == 'int64', 'int64 dtype')
    call tensogram_to_array(msg, 1, l2o, err)
    call check(err == TGM_ERROR_OK .and. all(l2o == l2), 'int64 rank 2 round trip')

    call tensogram_encode(f0, buf, err)
    call decode_buffer(buf, msg, err)
    call check(tensogram_object_ndim(msg, 1) == 0 .and. size(tensogram_object_shape(msg, 1)) == 0, &
               'a scalar has rank 0 and no extents')
    call tensogram_to_array(msg, 1, f0o, err)
    call check(err == TGM_ERROR_OK .and. f0o == f0, 'float32 scalar round trip')
    call tensogram_encode(d0, buf, err)
    call decode_buffer(buf, msg, err)
    call tensogram_to_array(msg, 1, d0o, err)
    call check(err == TGM_ERROR_OK .and. d0o == d0, 'float64 scalar round trip')
    call tensogram_encode(i0, buf, err)
    call decode_buffer(buf, msg, err)
    call tensogram_to_array(msg, 1, i0o, err)
    call check(err == TGM_ERROR_OK .and. i0o == i0, 'int32 scalar round trip')
    call tensogram_encode(l0, buf, err)
    call decode_buffer(buf, msg, err)
    call tensogram_to_array(msg, 1, l0o, err)
    call check(err == TGM_ERROR_OK .and. l0o == l0, 'int64 scalar round trip')
    call msg%free()
    call buf%free()
  end subroutine test_every_kind

  !> Ranks 1, 3 and 7 (the largest the generics take), and an empty array.
  subroutine test_ranks()
    real(c_float) :: a1(5), a3(2, 3, 4), a7(2, 1, 2, 1, 3, 1, 2), e2(0, 3)
    real(c_float), allocatable :: b1(:), b3(:, :, :), b7(:, :, :, :, :, :, :), f2(:, :)
    type(tensogram_buffer) :: buf
    type(tensogram_message) :: msg
    integer(c_int) :: err
    integer :: k
    a1 = [(real(k, c_float), k=1, 5)]
    a3 = reshape([(real(k, c_float), k=1, 24)], shape(a3))
    a7 = reshape([(real(-k, c_float), k=1, 24)], shape(a7))

    call tensogram_encode(a1, buf, err)
    call decode_buffer(buf, msg, err)
    call tensogram_to_array(msg, 1, b1, err)
    call check(err == TGM_ERROR_OK .and. all(b1 == a1), 'rank 1 round trip')

    call tensogram_encode(a3, buf, err, compression='lz4')
    call decode_buffer(buf, msg, err)
    call check(all(tensogram_object_shape(msg, 1) == [2, 3, 4]), 'rank 3 extents in Fortran order')
    call tensogram_to_array(msg, 1, b3, err)
    call check(err == TGM_ERROR_OK .and. all(b3 == a3), 'rank 3 round trip (lz4)')

    call tensogram_encode(a7, buf, err, compression='blosc2')
    call check_err(err, TGM_ERROR_OK, 'encode rank 7 (blosc2)')
    call decode_buffer(buf, msg, err)
    call check(tensogram_object_ndim(msg, 1) == 7, 'rank 7 ndim')
    call tensogram_to_array(msg, 1, b7, err)
    call check(err == TGM_ERROR_OK .and. all(shape(b7) == shape(a7)) .and. all(b7 == a7), 'rank 7 round trip')

    call tensogram_encode(e2, buf, err)
    call check_err(err, TGM_ERROR_OK, 'encode an empty array')
    call decode_buffer(buf, msg, err)
    call tensogram_to_array(msg, 1, f2, err)
    call check(err == TGM_ERROR_OK .and. all(shape(f2) == [0, 3]), 'empty array keeps its extents')
  end subroutine test_ranks

  !> F.6: a(ni, nj) is written as shape [nj, ni], strides [ni, 1].
  subroutine test_memory_order()
    real(c_double) :: a(3, 4)
    type(tensogram_buffer) :: buf
    type(tensogram_message) :: msg
    type(tensogram_metadata) :: meta
    type(tensogram_value) :: obj, reserved, tensor, list, item
    integer(c_int64_t) :: v
    integer(c_int) :: err
    integer :: i, j
    do j = 1, 4
      do i = 1, 3
        a(i, j) = 10*i + j
      end do
    end do
    call tensogram_encode(a, buf, err)
    call decode_buffer(buf, msg, err)
    call tensogram_message_metadata(msg, meta, err)
    call check_err(err, TGM_ERROR_OK, 'message metadata')
    ! (Fortran cannot apply % to a function result: one step at a time.)
    obj = tensogram_metadata_object(meta, 1)
    reserved = obj%get('_reserved_')
    tensor = reserved%get('tensor')
    call check(tensor%is_present(), '_reserved_.tensor present')
    list = tensor%get('shape')
    call check(list%len() == 2, 'wire shape has two extents')
    item = list%elem(1)
    call check(item%as_int(v) .and. v == 4, 'wire shape[0] is nj')
    item = list%elem(2)
    call check(item%as_int(v) .and. v == 3, 'wire shape[1] is ni')
    list = tensor%get('strides')
    item = list%elem(1)
    call check(item%as_int(v) .and. v == 3, 'wire strides[0] is ni')
    item = list%elem(2)
    call check(item%as_int(v) .and. v == 1, 'wire strides[1] is 1')
    call check(all(tensogram_object_shape(msg, 1) == [3, 4]), 'extents read back as (ni, nj)')
  end subroutine test_memory_order

  subroutine test_to_array_refusals()
    real(c_double) :: a(3, 4)
    real(c_float), allocatable :: wrong_kind(:, :)
    real(c_double), allocatable :: wrong_rank(:), right(:, :)
    type(tensogram_buffer) :: buf
    type(tensogram_message) :: msg, never_decoded
    integer(c_int) :: err
    a = 1
    call tensogram_encode(a, buf, err)
    call decode_buffer(buf, msg, err)
    call tensogram_to_array(msg, 1, wrong_kind, err)
    call check_err(err, TGM_ERROR_OBJECT, 'float64 object into a float32 array', &
                   'object error: tensogram_to_array: object 1 has dtype float64, the array is float32')
    call check(.not. allocated(wrong_kind), 'refused array stays unallocated')
    call tensogram_to_array(msg, 1, wrong_rank, err)
    call check_err(err, TGM_ERROR_OBJECT, 'rank 2 object into a rank 1 array', 'has rank 2, the array has rank 1')
    call tensogram_to_array(msg, 0, right, err)
    call check_err(err, TGM_ERROR_OBJECT, 'object index 0', 'object index 0 is out of range (1..1)')
    call tensogram_to_array(msg, 2, right, err)
    call check_err(err, TGM_ERROR_OBJECT, 'object index 2', 'object index 2 is out of range')
    call check(.not. allocated(right), 'out-of-range index leaves the array unallocated')
    call tensogram_to_array(never_decoded, 1, right, err)
    call check_err(err, TGM_ERROR_OBJECT, 'null message', 'the message handle is null')
    call check(tensogram_num_objects(never_decoded) == 0, 'a null message has no objects')
    call check(tensogram_object_dtype(msg, 5) == '' .and. tensogram_object_ndim(msg, -1) == 0, &
               'accessors out of range give empty results')
  end subroutine test_to_array_refusals

  !> Ours: params= carries the codec parameters the reference cannot pass.
  subroutine test_codec_params()
    integer(c_int32_t) :: counts(64, 16)
    real(c_double) :: field(40, 30)
    integer(c_int32_t), allocatable :: counts_out(:, :)
    real(c_double), allocatable :: field_out(:, :)
    type(tensogram_buffer) :: buf
    type(tensogram_message) :: msg
    type(tensogram_meta) :: p
    integer(c_int) :: err
    integer :: i, j
    do j = 1, 16
      do i = 1, 64
        counts(i, j) = mod(i*j, 97)
      end do
    end do
    do j = 1, 30
      do i = 1, 40
        field(i, j) = 250.0_c_double + 30.0_c_double*sin(0.1_c_double*i)*cos(0.2_c_double*j)
      end do
    end do

    call tensogram_encode(counts, buf, err, compression='szip')
    call check_err(err, TGM_ERROR_METADATA, 'szip without parameters', 'szip')
    call p%add_int('szip_rsi', 128_c_int64_t)
    call p%add_int('szip_block_size', 16_c_int64_t)
    call p%add_int('szip_flags', 8_c_int64_t)
    call tensogram_encode(counts, buf, err, compression='szip', params=p%object_json())
    call check_err(err, TGM_ERROR_OK, 'szip with parameters')
    call decode_buffer(buf, msg, err)
    call tensogram_to_array(msg, 1, counts_out, err)
    call check(err == TGM_ERROR_OK .and. all(counts_out == counts), 'szip round trip is exact')

    call tensogram_encode(field, buf, err, filter='shuffle', compression='zstd', &
                          params='{"shuffle_element_size": 8}')
    call check_err(err, TGM_ERROR_OK, 'shuffle + zstd')
    call decode_buffer(buf, msg, err)
    call tensogram_to_array(msg, 1, field_out, err)
    call check(err == TGM_ERROR_OK .and. all(field_out == field), 'shuffle + zstd round trip is exact')

    call tensogram_encode(field, buf, err, encoding='simple_packing', params='"sp_bits_per_value":16')
    call check_err(err, TGM_ERROR_OK, 'simple_packing, 16 bits')
    call decode_buffer(buf, msg, err)
    call tensogram_to_array(msg, 1, field_out, err)
    call check(err == TGM_ERROR_OK, 'simple_packing decodes')
    call check(maxval(abs(field_out - field)) <= (maxval(field) - minval(field))/65535.0_c_double, &
               'simple_packing error within one quantum')

    call tensogram_encode(field, buf, err, compression='no-such-codec')
    call check(err /= TGM_ERROR_OK .and. index(tensogram_last_error(), 'no-such-codec') > 0, &
               'an unknown codec is refused by name')
  end subroutine test_codec_params

  subroutine test_hash_and_non_finite()
    real(c_double) :: a(4)
    type(tensogram_buffer) :: buf
    type(tensogram_message) :: msg
    integer(c_int8_t), allocatable :: bytes(:)
    integer(c_int) :: err
    a = [1, 2, 3, 4]
    call tensogram_encode(a, buf, err)
    call decode_buffer(buf, msg, err)
    call check_err(err, TGM_ERROR_OK, 'xxh3 by default: verify_hash passes')
    call tensogram_encode(a, buf, err, hash='  ')
    call buf%as_array(bytes)
    call tensogram_decode(bytes, msg, err, verify_hash=.true.)
    call check_err(err, TGM_ERROR_MISSING_HASH, 'blank hash= writes no hash')
    call tensogram_decode(bytes, msg, err)
    call check_err(err, TGM_ERROR_OK, 'an unhashed message decodes without verify_hash')
    call tensogram_encode(a, buf, err, hash='md5')
    call check_err(err, TGM_ERROR_INVALID_ARG, 'unknown hash name', 'md5')
    call check(buf%size() == 0, 'failed encode leaves an empty buffer')
    a(2) = ieee_value(a(2), ieee_quiet_nan)
    call tensogram_encode(a, buf, err)
    call check_err(err, TGM_ERROR_ENCODING, 'NaN is refused')
  end subroutine test_hash_and_non_finite

  subroutine test_buffer()
    integer(c_int32_t) :: a(10)
    type(tensogram_buffer) :: buf
    integer(c_int8_t), allocatable :: bytes(:)
    integer(c_int) :: err
    a = 7
    call tensogram_encode(a, buf, err)
    call buf%as_array(bytes)
    call check(size(bytes, kind=c_size_t) == buf%size() .and. buf%size() > 40, 'buffer size and copy agree')
    call check(all(bytes(1:8) == transfer('TENSOGRM', bytes(1:8))), 'message starts with the magic')
    call buf%free()
    call buf%free()
    call check(buf%size() == 0, 'free is idempotent and empties the buffer')
    call buf%as_array(bytes)
    call check(size(bytes) == 0, 'as_array of an empty buffer has size 0')
  end subroutine test_buffer

  subroutine test_decode_bad_input()
    integer(c_int8_t), allocatable :: empty(:), bytes(:)
    integer(c_int8_t) :: junk(64)
    real(c_float) :: a(8)
    type(tensogram_buffer) :: buf
    type(tensogram_message) :: msg
    integer(c_int) :: err
    allocate (empty(0))
    call tensogram_decode(empty, msg, err)
    call check(err /= TGM_ERROR_OK .and. len(tensogram_last_error()) > 0, 'an empty buffer is refused with a text')
    junk = 42
    call tensogram_decode(junk, msg, err)
    call check_err(err, TGM_ERROR_FRAMING, 'garbage is a framing error')
    a = 1
    call tensogram_encode(a, buf, err)
    call buf%as_array(bytes)
    call tensogram_decode(bytes(1:size(bytes) - 9), msg, err)
    call check(err /= TGM_ERROR_OK, 'a truncated message is refused')
    call check(tensogram_num_objects(msg) == 0, 'a failed decode leaves a null message')
  end subroutine test_decode_bad_input

  !> F.7: passing a live handle to an intent(out) dummy releases it first;
  !> under ASan (the sanitizer build) a leak here fails the test.
  subroutine test_handle_reuse()
    integer(c_int64_t) :: a(100)
    type(tensogram_buffer) :: buf
    type(tensogram_message) :: msg
    integer(c_int8_t), allocatable :: bytes(:)
    integer(c_int) :: err
    integer :: k
    a = 3
    do k = 1, 20
      call tensogram_encode(a, buf, err)
      call buf%as_array(bytes)
      call tensogram_decode(bytes, msg, err)
    end do
    call check(err == TGM_ERROR_OK .and. tensogram_num_objects(msg) == 1, 'handles reused in a loop')
    call msg%free()
    call msg%free()
    call check(tensogram_num_objects(msg) == 0, 'message free is idempotent')
  end subroutine test_handle_reuse

end program test_arrays
