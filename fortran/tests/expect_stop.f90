! The two ways module `tensogram` stops a program (spec 07 F.7), each run
! by CTest, which matches the text on stderr and expects a failing status:
!   expect_stop copy <work dir>   assigning one handle to another
!   expect_stop check <work dir>  tensogram_check on a failed open
program expect_stop
  use, intrinsic :: iso_c_binding
  use tensogram
  implicit none
  character(len=16) :: mode
  character(len=256) :: work
  type(tensogram_message) :: a, b
  type(tensogram_file) :: f
  integer(c_int) :: err
  call get_command_argument(1, mode)
  call get_command_argument(2, work)
  select case (trim(mode))
  case ('copy')
    b = a
  case ('check')
    call tensogram_file_open(trim(work)//'/no/such/file.tgm', f, err)
    call tensogram_check(err, 'open')
  end select
  print '(a)', 'not stopped'
end program expect_stop
