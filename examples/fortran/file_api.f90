! Walk-throughs 1 and 2 of spec 07 F.8: append one message per step to a
! file, then read every message back by index.
!   fortran_file_api [file.tgm]
program file_api
  use, intrinsic :: iso_c_binding
  use tensogram
  implicit none
  integer, parameter :: ni = 8, nj = 4, steps = 3
  real(c_float) :: field(ni, nj)
  real(c_float), allocatable :: out(:, :)
  type(tensogram_file) :: f
  type(tensogram_message) :: msg
  type(tensogram_metadata) :: meta
  character(len=256) :: path
  integer(c_int) :: err
  integer :: n, k, step

  path = 'fortran_file_api.tgm'
  if (command_argument_count() >= 1) call get_command_argument(1, path)

  call tensogram_file_create(path, f, err)
  call tensogram_check(err, 'create')
  do step = 1, steps
    block
      type(tensogram_meta) :: m
      call m%add_string('name', 'temperature')
      call m%add_int('step', int(step, c_int64_t))
      field = 280.0 + step
      call tensogram_file_append(f, field, err, metadata_json=m%base_json(), compression='zstd')
      call tensogram_check(err, 'append')
    end block
  end do
  call f%close()

  call tensogram_file_open(path, f, err)
  call tensogram_check(err, 'open')
  call tensogram_file_message_count(f, n, err)
  call tensogram_check(err, 'count')
  do k = 1, n
    call tensogram_file_decode_message(f, k, msg, err)
    call tensogram_check(err, 'decode_message')
    call tensogram_to_array(msg, 1, out, err)
    call tensogram_check(err, 'to_array')
    call tensogram_message_metadata(msg, meta, err)
    call tensogram_check(err, 'metadata')
    print '(a,i0,3a,2(i0,1x),a,f6.1)', 'message ', k, ': ', tensogram_object_dtype(msg, 1), ' extents ', &
      shape(out), 'mean ', sum(out)/size(out)
    if (tensogram_metadata_get_int(meta, 'step', -1_c_int64_t) /= k) error stop 'wrong step'
  end do
  call f%close()
  ! A main program's variables live until exit: release what we hold.
  call meta%free()
  call msg%free()
  deallocate (out)
end program file_api
