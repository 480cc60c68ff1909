! A downstream Fortran program, written from spec 07 Part F alone, built
! against the installed module (find_package(tensogram COMPONENTS fortran)
! or pkg-config tensogram-fortran). Stops with a non-zero status on error.
program consumer
  use, intrinsic :: iso_c_binding
  use tensogram
  implicit none
  real(c_float) :: field(4, 3)
  real(c_float), allocatable :: back(:, :)
  type(tensogram_meta) :: m
  type(tensogram_buffer) :: buf
  type(tensogram_message) :: msg
  type(tensogram_metadata) :: meta
  integer(c_int8_t), allocatable :: wire(:)
  integer(c_int64_t) :: level
  integer(c_int) :: err
  integer :: i

  field = reshape([(real(i, c_float), i=1, 12)], [4, 3])
  call m%add_string('name', 'temperature')
  call m%add_int('level', 850_c_int64_t)
  call tensogram_encode(field, buf, err, metadata_json=m%base_json(), compression='zstd')
  call tensogram_check(err, 'encode')
  call buf%as_array(wire)
  call tensogram_decode(wire, msg, err, verify_hash=.true.)
  call tensogram_check(err, 'decode')
  if (tensogram_object_dtype(msg, 1) /= 'float32') error stop 'dtype'
  if (any(tensogram_object_shape(msg, 1) /= [4, 3])) error stop 'extents'
  call tensogram_to_array(msg, 1, back, err)
  call tensogram_check(err, 'to_array')
  if (maxval(abs(back - field)) > 0) error stop 'values'
  call tensogram_message_metadata(msg, meta, err)
  call tensogram_check(err, 'metadata')
  if (.not. tensogram_metadata_try_get_int(meta, 'level', level, obj_index=1)) error stop 'level'
  if (level /= 850 .or. tensogram_metadata_get_string(meta, 'name') /= 'temperature') error stop 'metadata'
  print '(a)', 'fortran consumer: ok'
  ! A main program's variables live until exit: release what we hold.
  call meta%free()
  call msg%free()
  call buf%free()
  deallocate (back, wire)
end program consumer
