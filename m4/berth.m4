dnl BERTH_BACKEND(NAME, DEFAULT-MODE, [PKG-MODULES], [DEBIAN-PACKAGES])
dnl   --with-NAME=auto|yes|builtin|module|no (default: auto).
dnl   auto: build in DEFAULT-MODE when PKG-MODULES are found, else skip it
dnl   with a WARNING that names DEBIAN-PACKAGES (collected in
dnl   berth_warnings for the summary too).  yes, builtin, module: the
dnl   libraries must be there.  module needs modules (--enable-modules,
dnl   shared libraries, dlopen): asking for one without them is an error.
AC_DEFUN([BERTH_BACKEND], [
  AC_ARG_WITH([$1],
    [AS_HELP_STRING([--with-$1@<:@=auto|yes|builtin|module|no@:>@],
                    [build the $1 backend @<:@default=auto@:>@])],
    [], [with_$1=auto])
  AS_CASE([$with_$1],
    [auto|yes|builtin|module|no], [],
    [AC_MSG_ERROR([bad value '$with_$1' for --with-$1: use auto, yes, builtin, module or no])])
  AS_IF([test "x$with_$1" = xmodule && test "x$berth_modules" != xyes],
    [AS_IF([test "x$enable_modules" != xyes],
       [AC_MSG_ERROR([--with-$1=module contradicts --disable-modules: use --with-$1=builtin, or drop --disable-modules])],
     [test "x$enable_shared" != xyes],
       [AC_MSG_ERROR([--with-$1=module needs shared libraries (--disable-shared was given): use --with-$1=builtin])],
       [AC_MSG_ERROR([--with-$1=module needs dlopen, which was not found: use --with-$1=builtin])])])
  berth_$1_mode=no
  AS_IF([test "x$with_$1" != xno], [
    m4_ifval([$3],
      [PKG_CHECK_MODULES(m4_toupper([$1_DEPS]), [$3],
                         [berth_$1_deps=yes], [berth_$1_deps=no])],
      [berth_$1_deps=yes])
    AS_CASE([$with_$1:$berth_$1_deps],
      [auto:no],
        [berth_$1_mode=no
         berth_$1_warning="the $1 backend is not built: pkg-config did not find $3; install m4_ifval([$4], [$4 (Debian)], [them]) and run configure again, or pass --without-$1"
         AC_MSG_WARN([$berth_$1_warning])
         berth_warnings="$berth_warnings
WARNING: $berth_$1_warning"],
      [*:no],
        [AC_MSG_ERROR([--with-$1=$with_$1: missing $3; install m4_ifval([$4], [$4 (Debian)], [them]), or use --with-$1=auto to build without it])],
      [auto:yes|yes:yes],        [berth_$1_mode=$2],
      [berth_$1_mode=$with_$1])
  ])
  dnl auto and yes build a module backend into libberth when modules are off
  AS_IF([test "x$berth_$1_mode" = xmodule && test "x$berth_modules" != xyes],
        [berth_$1_mode=builtin])
  AM_CONDITIONAL(m4_toupper([BUILD_$1]), [test "x$berth_$1_mode" != xno])
  AM_CONDITIONAL(m4_toupper([$1_MODULE]), [test "x$berth_$1_mode" = xmodule])
  AS_IF([test "x$berth_$1_mode" = xbuiltin],
        [AC_DEFINE(m4_toupper([BERTH_BUILTIN_$1]), [1],
                   [Define if the $1 backend is linked into libberth])])
])
