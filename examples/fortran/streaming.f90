! The streaming encoder: one message whose objects are written one at a
! time (levels of a 3-D field here), then read back object by object.
!   fortran_streaming [file.tgm]
program streaming
  use, intrinsic :: iso_c_binding
  use tensogram
  implicit none
  integer, parameter :: ni = 10, nj = 5
  integer(c_int64_t), parameter :: levels(3) = [1000, 850, 500]
  real(c_double) :: level_field(ni, nj)
  real(c_double), allocatable :: out(:, :)
  type(tensogram_streaming_encoder) :: enc
  type(tensogram_file) :: f
  type(tensogram_message) :: msg
  type(tensogram_metadata) :: meta
  character(len=256) :: path
  integer(c_int64_t) :: level
  integer(c_int) :: err
  integer :: k

  path = 'fortran_streaming.tgm'
  if (command_argument_count() >= 1) call get_command_argument(1, path)

  ! A complete JSON object: one base entry per object to come.
  call tensogram_streaming_encoder_create(path, enc, err, metadata_json= &
    '{"base":[{"level":1000},{"level":850},{"level":500}],"_extra_":{"model":"demo"}}')
  call tensogram_check(err, 'create')
  do k = 1, size(levels)
    level_field = real(levels(k), c_double)/100
    call tensogram_streaming_encoder_write(enc, level_field, err, compression='lz4')
    call tensogram_check(err, 'write')
  end do
  print '(a,i0,a)', 'wrote ', tensogram_streaming_encoder_count(enc), ' objects'
  call tensogram_streaming_encoder_finish(enc, err)
  call tensogram_check(err, 'finish')
  call enc%free()

  call tensogram_file_open(path, f, err)
  call tensogram_check(err, 'open')
  call tensogram_file_decode_message(f, 1, msg, err, verify_hash=.true.)
  call tensogram_check(err, 'decode')
  call tensogram_message_metadata(msg, meta, err)
  call tensogram_check(err, 'metadata')
  do k = 1, tensogram_num_objects(msg)
    call tensogram_to_array(msg, k, out, err)
    call tensogram_check(err, 'to_array')
    if (.not. tensogram_metadata_try_get_int(meta, 'level', level, obj_index=k)) error stop 'no level'
    print '(a,i0,a,i0,a,f5.1)', 'object ', k, ': level ', level, ', value ', out(1, 1)
    if (level /= levels(k) .or. maxval(abs(out - real(levels(k), c_double)/100)) > 0) error stop "wrong object"
  end do
  call f%close()
  ! A main program's variables live until exit: release what we hold.
  call meta%free()
  call msg%free()
  deallocate (out)
end program streaming
