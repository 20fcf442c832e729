/* The baseline of the footprint measurement: an empty C program, compiled and linked as
 * tests/c/every_entry.c is, without the library. */
int main(void) {
    return 0;
}
