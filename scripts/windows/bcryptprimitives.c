/* bcryptprimitives.dll for Wine 8, which has none: the Rust standard library (1.78 on) imports
 * ProcessPrng from it for its random numbers (HashMap keys), so a Rust program or a C program
 * linking libjitarena.a fails to start under Wine 8 ("Library bcryptprimitives.dll ... not
 * found", exit status 53) without it. This shim supplies ProcessPrng with RtlGenRandom
 * (advapi32's SystemFunction036), which Wine has. Built by scripts/windows/check.sh with
 * mingw and placed next to each .exe run under Wine; Windows 10 and later ship the real one.
 * For tests only: never ship it with a JIT. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size) {
    /* RtlGenRandom takes a ULONG (32-bit) length: larger requests go in pieces. Windows'
     * ProcessPrng always returns TRUE; this one says when RtlGenRandom fails. */
    while (size > 0) {
        ULONG piece = size > 0x40000000u ? 0x40000000u : (ULONG)size;
        if (!SystemFunction036(data, piece)) return FALSE;
        data += piece;
        size -= piece;
    }
    return TRUE;
}
