dnl BERTH_BACKEND(NAME, DEFAULT-MODE, [PKG-MODULES])
dnl   --with-NAME=auto|yes|builtin|module|no (default: auto).
dnl   auto: build in DEFAULT-MODE when PKG-MODULES are found, else skip.
AC_DEFUN([BERTH_BACKEND], [
  AC_ARG_WITH([$1],
    [AS_HELP_STRING([--with-$1@<:@=auto|yes|builtin|module|no@:>@],
                    [build the $1 backend @<:@default=auto@:>@])],
    [], [with_$1=auto])
  berth_$1_mode=no
  AS_IF([test "x$with_$1" != xno], [
    m4_ifval([$3],
      [PKG_CHECK_MODULES(m4_toupper([$1_DEPS]), [$3],
                         [berth_$1_deps=yes], [berth_$1_deps=no])],
      [berth_$1_deps=yes])
    AS_CASE([$with_$1:$berth_$1_deps],
      [auto:no],                 [berth_$1_mode=no],
      [*:no],                    [AC_MSG_ERROR([--with-$1: missing $3])],
      [auto:yes|yes:yes],        [berth_$1_mode=$2],
      [builtin:yes|module:yes],  [berth_$1_mode=$with_$1],
      [AC_MSG_ERROR([bad value '$with_$1' for --with-$1])])
  ])
  AS_IF([test "x$berth_$1_mode" = xmodule && test "x$berth_modules" != xyes],
        [berth_$1_mode=builtin])
  AM_CONDITIONAL(m4_toupper([BUILD_$1]), [test "x$berth_$1_mode" != xno])
  AM_CONDITIONAL(m4_toupper([$1_MODULE]), [test "x$berth_$1_mode" = xmodule])
  AS_IF([test "x$berth_$1_mode" = xbuiltin],
        [AC_DEFINE(m4_toupper([BERTH_BUILTIN_$1]), [1],
                   [Define if the $1 backend is linked into libberth])])
])
