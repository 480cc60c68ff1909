! Checks for the Fortran test drivers (no framework): each failed check
! prints where and what; `finish` ends the program with status 1 when any
! failed. Every driver takes <fixtures dir> <work dir> as arguments.
module test_support
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use tensogram
  implicit none
  private
  public :: check, check_err, finish, argument

  type :: counters
    integer :: checks = 0
    integer :: failures = 0
  end type counters
  type(counters), save :: c

contains

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    c%checks = c%checks + 1
    if (.not. cond) then
      c%failures = c%failures + 1
      write (error_unit, '(a)') 'FAILED: '//what
    end if
  end subroutine check

  !> `err` must be `expected`; when `fragment` is given the last error text
  !> must contain it.
  subroutine check_err(err, expected, what, fragment)
    integer(c_int), intent(in) :: err, expected
    character(len=*), intent(in) :: what
    character(len=*), intent(in), optional :: fragment
    character(len=16) :: got, want
    write (got, '(i0)') err
    write (want, '(i0)') expected
    call check(err == expected, what//': error code '//trim(got)//', expected '//trim(want)// &
               ' (last error: '//tensogram_last_error()//')')
    if (present(fragment) .and. err == expected .and. err /= TGM_ERROR_OK) then
      call check(index(tensogram_last_error(), fragment) > 0, what//': last error "'// &
                 tensogram_last_error()//'" lacks "'//fragment//'"')
    end if
  end subroutine check_err

  subroutine finish(name)
    character(len=*), intent(in) :: name
    character(len=16) :: n, f
    write (n, '(i0)') c%checks
    write (f, '(i0)') c%failures
    if (c%failures > 0) then
      write (error_unit, '(a)') name//': '//trim(f)//' of '//trim(n)//' checks failed'
      error stop 1
    end if
    write (*, '(a)') name//': all '//trim(n)//' checks passed'
  end subroutine finish

  function argument(i) result(s)
    integer, intent(in) :: i
    character(len=:), allocatable :: s
    integer :: n
    call get_command_argument(i, length=n)
    allocate (character(len=n) :: s)
    if (n > 0) call get_command_argument(i, s)
    if (n == 0) error stop 'usage: <test> <fixtures dir> <work dir>'
  end function argument

end module test_support
