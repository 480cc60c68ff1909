! Encode a 2-D field into one message in memory, decode it, read it back
! as a Fortran array and look at its metadata (docs/fortran.md).
!   fortran_encode_decode
program encode_decode
  use, intrinsic :: iso_c_binding
  use tensogram
  implicit none
  integer, parameter :: ni = 36, nj = 18
  real(c_double) :: field(ni, nj)
  real(c_double), allocatable :: back(:, :)
  type(tensogram_meta) :: m, packing
  type(tensogram_buffer) :: buf
  type(tensogram_message) :: msg
  type(tensogram_metadata) :: meta
  integer(c_int8_t), allocatable :: wire(:)
  integer(c_int64_t) :: level
  integer(c_int) :: err
  integer :: i, j

  do j = 1, nj
    do i = 1, ni
      field(i, j) = 273.15_c_double + 20*cos(0.1_c_double*i)*sin(0.2_c_double*j)
    end do
  end do
  call m%add_string('name', '2t')
  call m%add_int('level', 850_c_int64_t)
  ! Codec parameters go in params= (an extension over the reference):
  ! 16-bit simple packing, then zstd.
  call packing%add_int('sp_bits_per_value', 16_c_int64_t)
  call tensogram_encode(field, buf, err, metadata_json=m%base_json(), encoding='simple_packing', &
                        compression='zstd', params=packing%object_json())
  call tensogram_check(err, 'encode')
  print '(a,i0,a,i0,a)', 'encoded ', ni*nj*8, ' bytes of float64 into a ', buf%size(), '-byte message'

  call buf%as_array(wire)
  call tensogram_decode(wire, msg, err, verify_hash=.true.)
  call tensogram_check(err, 'decode')
  call tensogram_to_array(msg, 1, back, err)
  call tensogram_check(err, 'to_array')
  print '(a,2(i0,1x),a,es9.2)', 'extents ', shape(back), 'max abs error ', maxval(abs(back - field))

  call tensogram_message_metadata(msg, meta, err)
  call tensogram_check(err, 'metadata')
  if (tensogram_metadata_try_get_int(meta, 'level', level, obj_index=1)) print '(a,i0)', 'level ', level
  print '(a,a)', 'name ', tensogram_metadata_get_string(meta, 'name')
  if (maxval(abs(back - field)) > 40.0_c_double/65535) error stop 'packing error above one quantum'
  ! A main program's variables live until exit: release what we hold.
  call meta%free()
  call msg%free()
  call buf%free()
  deallocate (back, wire)
end program encode_decode
