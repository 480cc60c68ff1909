! The Fortran side of the cross-language round trips (spec 07 F.6): what
! Fortran writes, C++ (interop_peer.cpp) and Python (interop.py) read, and
! the other way round. Both peers write and check the same content:
!   interop write <file>  message 1: float64 a(3,4), a(i,j) = 10*i + j,
!                         base name "grid", level 850 (zstd);
!                         message 2: int32 b(2,3,4), b(i,j,k) = 100*i+10*j+k
!                         (shuffle + lz4, codec parameters via params=)
!   interop read <file>   a peer's file: message 1 float32 row-major
!                         [2,3,4] with x[i][j][k] = 100*i + 10*j + k (0-based),
!                         string "source"; from C++ also the byte string
!                         "blob" = 01 02 ff (Python metadata has no bytes);
!                         message 2 int64 [5] = -10**12 * n
program interop
  use, intrinsic :: iso_c_binding
  use tensogram
  implicit none
  character(len=16) :: mode
  character(len=1024) :: path
  call get_command_argument(1, mode)
  call get_command_argument(2, path)
  select case (trim(mode))
  case ('write')
    call write_file(trim(path))
  case ('read')
    call read_file(trim(path))
  case default
    error stop 'usage: interop write|read <file>'
  end select

contains

  subroutine write_file(path)
    character(len=*), intent(in) :: path
    real(c_double) :: a(3, 4)
    integer(c_int32_t) :: b(2, 3, 4)
    type(tensogram_file) :: f
    type(tensogram_meta) :: m
    integer(c_int) :: err
    integer :: i, j, k
    do j = 1, 4
      do i = 1, 3
        a(i, j) = 10*i + j
      end do
    end do
    do k = 1, 4
      do j = 1, 3
        do i = 1, 2
          b(i, j, k) = 100*i + 10*j + k
        end do
      end do
    end do
    call m%add_string('name', 'grid')
    call m%add_int('level', 850_c_int64_t)
    call tensogram_file_create(path, f, err)
    call tensogram_check(err, 'create')
    call tensogram_file_append(f, a, err, metadata_json=m%base_json(), compression='zstd')
    call tensogram_check(err, 'append a')
    call tensogram_file_append(f, b, err, filter='shuffle', compression='lz4', params='{"shuffle_element_size":4}')
    call tensogram_check(err, 'append b')
    call f%close()
    print '(a)', 'wrote '//path
  end subroutine write_file

  subroutine read_file(path)
    character(len=*), intent(in) :: path
    type(tensogram_file) :: f
    type(tensogram_message) :: msg
    type(tensogram_metadata) :: meta
    real(c_float), allocatable :: x(:, :, :)
    integer(c_int64_t), allocatable :: y(:)
    character(len=:), allocatable :: source
    type(tensogram_value) :: blob
    integer(c_int8_t), allocatable :: bytes(:)
    integer(c_int) :: err
    integer :: n, i, j, k
    call tensogram_file_open(path, f, err)
    call tensogram_check(err, 'open')
    call tensogram_file_message_count(f, n, err)
    call tensogram_check(err, 'count')
    if (n /= 2) error stop 'expected two messages'
    call tensogram_file_decode_message(f, 1, msg, err, verify_hash=.true.)
    call tensogram_check(err, 'decode 1')
    call tensogram_to_array(msg, 1, x, err)
    call tensogram_check(err, 'to_array x')
    if (any(shape(x) /= [4, 3, 2])) error stop 'row-major [2,3,4] must arrive as (4,3,2)'
    do i = 0, 1
      do j = 0, 2
        do k = 0, 3
          if (abs(x(k + 1, j + 1, i + 1) - real(100*i + 10*j + k, c_float)) > 0) error stop 'x value'
        end do
      end do
    end do
    call tensogram_message_metadata(msg, meta, err)
    call tensogram_check(err, 'metadata')
    if (.not. tensogram_metadata_try_get_string(meta, 'source', source)) error stop 'no source'
    if (source == 'c++') then
      blob = tensogram_metadata_get(meta, 'blob')
      if (blob%kind() /= TGM_VALUE_TYPE_BYTES) error stop 'blob is not a byte string'
      if (.not. blob%as_bytes(bytes)) error stop 'as_bytes'
      if (size(bytes) /= 3) error stop 'blob length'
      if (any(bytes /= [1_c_int8_t, 2_c_int8_t, -1_c_int8_t])) error stop 'blob bytes'
    end if
    call tensogram_file_decode_message(f, 2, msg, err, verify_hash=.true.)
    call tensogram_check(err, 'decode 2')
    call tensogram_to_array(msg, 1, y, err)
    call tensogram_check(err, 'to_array y')
    if (size(y) /= 5) error stop 'y size'
    do i = 1, 5
      if (y(i) /= -1000000000000_c_int64_t*(i - 1)) error stop 'y value'
    end do
    print '(a)', 'read '//path//' written by '//source
  end subroutine read_file

end program interop
