// The C test of jitarena_method's initializer, compiled as C++11.
#include "method_init.c"
