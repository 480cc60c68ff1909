! Fortran tests of files and the streaming encoder (spec 07 F.5, F.8
! walk-throughs 1 and 2), and of reading the reference's own files.
! Arguments: <fixtures dir> <work dir>.
program test_files
  use, intrinsic :: iso_c_binding
  use tensogram
  use test_support
  implicit none
  character(len=:), allocatable :: fixtures, work

  fixtures = argument(1)
  work = argument(2)
  call test_file_walkthrough()
  call test_file_errors()
  call test_streaming()
  call test_reference_fixtures()
  deallocate (fixtures, work)  ! a main program's allocatables live until exit
  call finish('test_files')

contains

  !> F.8 (1) and (2): one message per step, read back by index.
  subroutine test_file_walkthrough()
    real(c_float) :: field(6, 4)
    real(c_float), allocatable :: out(:, :)
    type(tensogram_file) :: f
    type(tensogram_message) :: msg
    type(tensogram_metadata) :: meta
    type(tensogram_buffer) :: raw
    integer(c_int8_t), allocatable :: bytes(:)
    integer(c_int) :: err
    integer :: n, k, step
    character(len=:), allocatable :: path
    path = work//'/walkthrough.tgm'
    call tensogram_file_create(path, f, err)
    call tensogram_check(err, 'create')
    do step = 1, 3
      block
        type(tensogram_meta) :: m
        field = real(step, c_float)
        call m%add_int('step', int(step, c_int64_t))
        call tensogram_file_append(f, field, err, metadata_json=m%base_json(), compression='zstd')
        call check_err(err, TGM_ERROR_OK, 'append step')
      end block
    end do
    call f%close()
    call f%close()

    call tensogram_file_open(path//'   ', f, err)
    call check_err(err, TGM_ERROR_OK, 'open (trailing blanks trimmed)')
    call tensogram_file_message_count(f, n, err)
    call check(err == TGM_ERROR_OK .and. n == 3, 'three messages')
    do k = 1, n
      call tensogram_file_decode_message(f, k, msg, err)
      call check_err(err, TGM_ERROR_OK, 'decode_message')
      call check(tensogram_object_dtype(msg, 1) == 'float32', 'dtype of a file message')
      call check(all(tensogram_object_shape(msg, 1) == [6, 4]), 'extents of a file message')
      call tensogram_to_array(msg, 1, out, err)
      call check(err == TGM_ERROR_OK .and. all(out == real(k, c_float)), 'values of each step')
      call tensogram_message_metadata(msg, meta, err)
      call check(tensogram_metadata_get_int(meta, 'step', -1_c_int64_t) == k, 'step metadata')
    end do
    call tensogram_file_read_message(f, 2, raw, err)
    call check_err(err, TGM_ERROR_OK, 'read_message')
    call raw%as_array(bytes)
    call tensogram_decode(bytes, msg, err, verify_hash=.true.)
    call check(err == TGM_ERROR_OK .and. tensogram_num_objects(msg) == 1, 'raw message bytes decode')
    call tensogram_file_decode_message(f, 4, msg, err)
    call check_err(err, TGM_ERROR_FRAMING, 'index past the end')
    call tensogram_file_decode_message(f, 0, msg, err)
    call check_err(err, TGM_ERROR_FRAMING, 'index 0', 'message index 0 is out of range (indices start at 1)')
    call tensogram_file_read_message(f, -3, raw, err)
    call check_err(err, TGM_ERROR_FRAMING, 'negative index', 'tensogram_file_read_message: message index -3')
    call f%close()
  end subroutine test_file_walkthrough

  subroutine test_file_errors()
    type(tensogram_file) :: f, never_opened
    real(c_double) :: a(2)
    integer(c_int) :: err
    integer :: n
    call tensogram_file_open(work//'/does/not/exist.tgm', f, err)
    call check_err(err, TGM_ERROR_IO, 'opening a missing file')
    call tensogram_file_message_count(never_opened, n, err)
    call check_err(err, TGM_ERROR_INVALID_ARG, 'a null file handle', 'null')
    a = 1
    call tensogram_file_append(never_opened, a, err)
    call check_err(err, TGM_ERROR_INVALID_ARG, 'append to a null file handle')
    call tensogram_file_create(work//'/bad-meta.tgm', f, err)
    call tensogram_file_append(f, a, err, metadata_json='"base": [{"x": }]')
    call check_err(err, TGM_ERROR_METADATA, 'malformed metadata JSON')
    call tensogram_file_message_count(f, n, err)
    call check(err == TGM_ERROR_OK .and. n == 0, 'a refused append writes nothing')
  end subroutine test_file_errors

  !> One message, many objects, written progressively (F.8 (2)).
  subroutine test_streaming()
    type(tensogram_streaming_encoder) :: enc
    type(tensogram_file) :: f
    type(tensogram_message) :: msg
    type(tensogram_metadata) :: meta
    real(c_double) :: a(5)
    integer(c_int32_t) :: b(2, 2)
    real(c_double), allocatable :: a_out(:)
    integer(c_int32_t), allocatable :: b_out(:, :)
    integer(c_int) :: err
    integer :: n
    character(len=:), allocatable :: path, name
    path = work//'/streamed.tgm'
    a = [1, 2, 3, 4, 5]
    b = reshape([7, 8, 9, 10], [2, 2])
    call tensogram_streaming_encoder_create(path, enc, err, &
                                            metadata_json='{"base":[{"name":"a"},{"name":"b"}],"run":7}')
    call check_err(err, TGM_ERROR_OK, 'streaming create')
    call tensogram_streaming_encoder_write(enc, a, err)
    call check_err(err, TGM_ERROR_OK, 'streaming write 1')
    call tensogram_streaming_encoder_write(enc, b, err, compression='lz4')
    call check_err(err, TGM_ERROR_OK, 'streaming write 2')
    call check(tensogram_streaming_encoder_count(enc) == 2, 'two objects written')
    call tensogram_streaming_encoder_finish(enc, err)
    call check_err(err, TGM_ERROR_OK, 'streaming finish')
    call enc%free()
    call enc%free()
    call check(tensogram_streaming_encoder_count(enc) == 0, 'a freed encoder counts 0')

    call tensogram_file_open(path, f, err)
    call tensogram_file_message_count(f, n, err)
    call check(n == 1, 'streamed file holds one message')
    call tensogram_file_decode_message(f, 1, msg, err, verify_hash=.true.)
    call check(err == TGM_ERROR_OK .and. tensogram_num_objects(msg) == 2, 'streamed message has two objects')
    call tensogram_to_array(msg, 1, a_out, err)
    call check(err == TGM_ERROR_OK .and. all(a_out == a), 'first streamed object')
    call tensogram_to_array(msg, 2, b_out, err)
    call check(err == TGM_ERROR_OK .and. all(b_out == b), 'second streamed object')
    call tensogram_message_metadata(msg, meta, err)
    call check(tensogram_metadata_get_string(meta, 'run') == '7', 'message-level metadata of the stream')
    call check(tensogram_metadata_try_get_string(meta, 'name', name, obj_index=2), 'per-object name')
    call check(name == 'b', 'second object name')
    call f%close()

    call tensogram_streaming_encoder_create(work//'/never-finished.tgm', enc, err)
    call tensogram_streaming_encoder_write(enc, a, err, compression='nope')
    call check(err /= TGM_ERROR_OK .and. index(tensogram_last_error(), 'nope') > 0, 'bad codec on write')
    call enc%free()
    call tensogram_streaming_encoder_finish(enc, err)
    call check_err(err, TGM_ERROR_INVALID_ARG, 'finish after free')
  end subroutine test_streaming

  !> Files the reference wrote: mars_metadata.tgm is big-endian float64
  !> [2, 3] = 1..6, read here as (3, 2) in native order.
  subroutine test_reference_fixtures()
    type(tensogram_file) :: f
    type(tensogram_message) :: msg
    type(tensogram_metadata) :: meta
    real(c_double), allocatable :: a(:, :)
    real(c_float), allocatable :: b(:, :)
    integer(c_int) :: err
    integer :: n, i, j
    call tensogram_file_open(fixtures//'/tgm/mars_metadata.tgm', f, err)
    call check_err(err, TGM_ERROR_OK, 'open the reference fixture')
    call tensogram_file_decode_message(f, 1, msg, err, verify_hash=.true.)
    call check_err(err, TGM_ERROR_OK, 'decode the reference fixture')
    call tensogram_to_array(msg, 1, a, err)
    call check(err == TGM_ERROR_OK .and. all(shape(a) == [3, 2]), 'reference [2,3] arrives as (3,2)')
    do j = 1, 2
      do i = 1, 3
        call check(a(i, j) == real(3*(j - 1) + i, c_double), 'reference value a(i,j) = row-major [j-1][i-1]')
      end do
    end do
    call tensogram_message_metadata(msg, meta, err)
    call check(tensogram_metadata_get_string(meta, 'mars.type') == 'fc', 'reference mars.type')
    call check(tensogram_metadata_get_int(meta, 'mars.step', 0_c_int64_t) == 12, 'reference mars.step')
    call f%close()

    call tensogram_file_open(fixtures//'/tgm/multi_message.tgm', f, err)
    call tensogram_file_message_count(f, n, err)
    call check(err == TGM_ERROR_OK .and. n == 2, 'reference multi_message count')
    call tensogram_file_open(fixtures//'/tgm/metadata_parity.tgm', f, err)
    call tensogram_file_decode_message(f, 1, msg, err)
    call tensogram_to_array(msg, 1, b, err)
    call check(err == TGM_ERROR_OK .and. all(shape(b) == [3, 2]) .and. all(b == 0), 'reference float32 zeros')
  end subroutine test_reference_fixtures

end program test_files
