/* A Windows JIT's use of the stats log, run under Wine by scripts/windows/check.sh:
 *   write_log DIR
 * writes DIR\jité-日本\log-%p.jas (a name that is not ASCII, given to the C API in UTF-8, with
 * the process id) and DIR\%m-%p.jas (the module: this program, "write_log"), and checks that
 *   - "%p" became this process's id and the non-ASCII name reached the file system whole;
 *   - the log can be read while it is written, by another handle and by another process;
 *   - a second writer is refused: by the OS (a handle opened for writing), by this copy of the
 *     library (a trace opened on the same file) and by another process's copy (its log
 *     opened on the same file), each time with JITARENA_E_IO and the file left as it was.
 * The script then reads the logs with the Linux and the Windows `jitarena`.
 * The child mode, `write_log --second-writer PATH SIZE`, is the other process. Wide-character
 * entry point (-municode): arguments arrive as Windows has them, UTF-16. */
#include <stdio.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

#include "jitarena.h"
#include "check.h"

static const char* const KINDS[] = {"ASTNode", "BasicBlock", "LSRA"};
static const char* const PHASES[] = {"Import", "Morph", "RegAlloc"};

/* UTF-16 to UTF-8, as a JIT hands a Windows path to the C API. */
static void to_utf8(const wchar_t* wide, char* out, int size) {
    CHECK(WideCharToMultiByte(CP_UTF8, 0, wide, -1, out, size, NULL, NULL) > 0);
}

static LONGLONG file_size(const wchar_t* path) {
    WIN32_FILE_ATTRIBUTE_DATA data;
    CHECK(GetFileAttributesExW(path, GetFileExInfoStandard, &data));
    return ((LONGLONG)data.nFileSizeHigh << 32) | data.nFileSizeLow;
}

/* Opens `path` for reading as a reader of a log being written must (letting the writer
 * write: FILE_SHARE_WRITE), and checks the header's magic. */
static HANDLE open_reader(const wchar_t* path) {
    char head[8];
    DWORD got = 0;
    HANDLE h = CreateFileW(path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                           OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    CHECK(h != INVALID_HANDLE_VALUE);
    CHECK(ReadFile(h, head, sizeof head, &got, NULL) && got == sizeof head);
    CHECK(memcmp(head, "JITARENA", 8) == 0);
    return h;
}

/* Compiles `count` methods (names not ASCII either), each with a record in the open log. */
static void compile_methods(int first, int count) {
    jitarena_config cfg;
    jitarena* a;
    int m, i;
    jitarena_config_init(&cfg);
    cfg.kind_names = KINDS;
    cfg.kind_count = 3;
    cfg.phase_names = PHASES;
    cfg.phase_count = 3;
    a = jitarena_create(&cfg);
    CHECK(a != NULL);
    for (m = first; m < first + count; m++) {
        char name[64];
        jitarena_method method = {sizeof(jitarena_method), name, m, (m % 3) ? "Tier1" : "Tier0", 0, 0};
        snprintf(name, sizeof name, "Caf\xc3\xa9:M\xc3\xa9thode%d()", m);
        jitarena_set_phase(a, 0);
        for (i = 0; i < 20 + m % 17; i++) CHECK(jitarena_alloc(a, 48, 0) != NULL);
        jitarena_set_phase(a, 1);
        CHECK(jitarena_alloc(a, 200 + 8 * (m % 5), 1) != NULL);
        jitarena_set_phase(a, 2);
        for (i = 0; i < 5 * (m % 7 + 1); i++) CHECK(jitarena_alloc(a, 96, 2) != NULL);
        CHECK(jitarena_method_done(a, &method) == 0);
        jitarena_reset(a);
    }
    jitarena_destroy(a);
}

/* The other process: reads the log its parent is writing, then tries to write it too. */
static int second_writer(const wchar_t* path, LONGLONG size_then) {
    char utf8[MAX_PATH * 4];
    HANDLE h = open_reader(path);
    CloseHandle(h);
    CHECK(file_size(path) >= size_then);
    to_utf8(path, utf8, sizeof utf8);
    CHECK(jitarena_log_open(utf8) == JITARENA_E_IO);
    CHECK(strstr(jitarena_last_error_message(), "another writer has this file open") != NULL);
    CHECK(file_size(path) >= size_then); /* not emptied */
    printf("write_log --second-writer: %d passed, 0 failed\n", checks_passed);
    return 0;
}

int wmain(int argc, wchar_t** argv) {
    wchar_t dir[MAX_PATH], pattern_w[MAX_PATH], log_w[MAX_PATH], module_w[MAX_PATH];
    wchar_t self[MAX_PATH], command[3 * MAX_PATH];
    char pattern[MAX_PATH * 4], log[MAX_PATH * 4];
    DWORD pid = GetCurrentProcessId(), code = 1;
    LONGLONG size_then;
    HANDLE reader, writer;
    STARTUPINFOW si;
    PROCESS_INFORMATION pi;

    if (argc == 4 && wcscmp(argv[1], L"--second-writer") == 0) {
        return second_writer(argv[2], _wtoi64(argv[3]));
    }
    if (argc != 2) {
        fprintf(stderr, "usage: write_log DIR\n");
        return 2;
    }

    /* A directory whose name is not ASCII; the C API takes the UTF-8 of its path. */
    swprintf(dir, MAX_PATH, L"%ls\\jit\u00e9-\u65e5\u672c", argv[1]);
    CHECK(CreateDirectoryW(dir, NULL) || GetLastError() == ERROR_ALREADY_EXISTS);
    swprintf(pattern_w, MAX_PATH, L"%ls\\log-%%p.jas", dir);
    swprintf(log_w, MAX_PATH, L"%ls\\log-%lu.jas", dir, (unsigned long)pid);
    to_utf8(pattern_w, pattern, sizeof pattern);
    to_utf8(log_w, log, sizeof log);
    CHECK(jitarena_log_open(pattern) == 0);
    CHECK(GetFileAttributesW(log_w) != INVALID_FILE_ATTRIBUTES); /* "%p", the name whole */
    compile_methods(0, 40);

    /* Read while it is written, by another handle of this process. */
    reader = open_reader(log_w);
    size_then = file_size(log_w);
    CHECK(size_then > 10);

    /* A second writer: the OS refuses a handle for writing (the log shares reading only)... */
    writer = CreateFileW(log_w, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                         OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    CHECK(writer == INVALID_HANDLE_VALUE && GetLastError() == ERROR_SHARING_VIOLATION);
    /* ...this copy of the library refuses a trace on the same file, leaving it whole... */
    CHECK(jitarena_trace_open(log) == JITARENA_E_IO);
    CHECK(strstr(jitarena_last_error_message(), "another writer has this file open") != NULL);
    CHECK(file_size(log_w) == size_then);
    /* ...and so does another process's copy, which can read it meanwhile. */
    CHECK(GetModuleFileNameW(NULL, self, MAX_PATH) > 0);
    swprintf(command, 3 * MAX_PATH, L"\"%ls\" --second-writer \"%ls\" %lu", self, log_w,
             (unsigned long)size_then);
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    CHECK(CreateProcessW(self, command, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi));
    CHECK(WaitForSingleObject(pi.hProcess, 60000) == WAIT_OBJECT_0);
    CHECK(GetExitCodeProcess(pi.hProcess, &code) && code == 0);
    CloseHandle(pi.hProcess);
    CloseHandle(pi.hThread);
    CHECK(file_size(log_w) == size_then);

    /* The writer goes on; the reader's handle sees the file grow. */
    compile_methods(40, 60);
    CHECK(jitarena_log_close() == 0);
    CHECK(file_size(log_w) > size_then);
    CHECK(SetFilePointer(reader, 0, NULL, FILE_END) == (DWORD)file_size(log_w));
    CloseHandle(reader);

    /* "%m": the module that holds this copy of the library, here the executable. */
    swprintf(pattern_w, MAX_PATH, L"%ls\\%%m-%%p.jas", argv[1]);
    swprintf(module_w, MAX_PATH, L"%ls\\write_log-%lu.jas", argv[1], (unsigned long)pid);
    to_utf8(pattern_w, pattern, sizeof pattern);
    CHECK(jitarena_log_open(pattern) == 0);
    compile_methods(0, 10);
    CHECK(jitarena_log_close() == 0);
    CHECK(file_size(module_w) > 10);

    printf("write_log: %d passed, 0 failed\n", checks_passed);
    return 0;
}
