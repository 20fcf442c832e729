/* Calls every entry point declared in jitarena.h, once each, as a JIT would: the program whose
 * text, linked with -Wl,--gc-sections, tests/footprint.rs and scripts/footprint.sh weigh
 * against an empty C program (tests/c/empty.c). It also checks the results, so that the
 * compiler keeps every call. Arguments: a stats log path and a trace path (both written). */
#include <stdint.h>
#include <stdio.h>

#include "jitarena.h"

static const char* const KINDS[] = {"ASTNode", "BasicBlock"};
static const char* const PHASES[] = {"Import", "RegAlloc"};

int main(int argc, char** argv) {
    jitarena_config cfg;
    jitarena_event events[2];
    jitarena_method method;
    jitarena* a;
    uint64_t sum = 0;
    if (argc != 3) {
        fprintf(stderr, "usage: every_entry LOG TRACE\n");
        return 2;
    }
    if (jitarena_abi_version() != JITARENA_ABI_VERSION) {
        fprintf(stderr, "ABI %u\n", jitarena_abi_version());
        return 1;
    }
    if (jitarena_log_open(argv[1]) != 0 || jitarena_trace_open(argv[2]) != 0) {
        fprintf(stderr, "open: %s\n", jitarena_last_error_message());
        return 1;
    }
    jitarena_config_init(&cfg);
    cfg.kind_names = KINDS;
    cfg.kind_count = 2;
    cfg.phase_names = PHASES;
    cfg.phase_count = 2;
    cfg.kinds_by_phase = 1;
    (void)jitarena_aggregate_enable(1);
    a = jitarena_create(&cfg);
    if (a == NULL) {
        fprintf(stderr, "create: %s\n", jitarena_last_error_message());
        return 1;
    }
    jitarena_set_phase(a, 0);
    if (jitarena_alloc(a, 24, 0) == NULL || jitarena_alloc_slow(a, 100000, 1) == NULL ||
        jitarena_alloc_slot(a, 8, jitarena_kind_slot_of(1)) == NULL) {
        fprintf(stderr, "alloc: %s\n", jitarena_strerror(jitarena_failure(a)));
        return 1;
    }
    jitarena_set_phase(a, 1);
    jitarena_phase_begin(a, 0);
    jitarena_phase_end(a, 1);
    jitarena_phase_end(a, 0);
    jitarena_phase_mark(a, 1, JITARENA_MARK_SWITCH);
    jitarena_phase_mark_slow(a, 0, JITARENA_MARK_SWITCH);
    if (jitarena_alloc_slot_or(a, 8, 0, (jitarena_on_failure)NULL) == NULL) return 1;
    {
        jitarena_head* head = (jitarena_head*)a;
        uintptr_t cursor = head->cursor, next;
        if (jitarena_fits(head, cursor, 8, &next) && jitarena_take(head, cursor, next, 8, 0) == NULL) return 1;
    }
    if (jitarena_alloc_slot_at(a, 8, 0, JITARENA_CALLER_SITE()) == NULL) return 1;
    {
        jitarena_kind_handle h = jitarena_kind_handle_of(a, 1);
        if (jitarena_handle_arena(h) != a || jitarena_handle_slot(h) != 1) return 1;
        if (jitarena_alloc_handle_or(h, 8, (jitarena_on_failure)NULL) == NULL) return 1;
    }
    if (jitarena_alloc_slow_at(a, 16, 1, (const void*)0) == NULL) return 1;
    jitarena_destroy(jitarena_create_checked(&cfg, JITARENA_ABI_VERSION, sizeof(jitarena_head)));
    events[0].op = JITARENA_EVENT_ALLOC;
    events[0].arg = 1;
    events[0].size = 16;
    events[1].op = JITARENA_EVENT_PHASE;
    events[1].arg = 0;
    events[1].size = 0;
    sum += jitarena_replay(a, events, 2) + jitarena_replay_uncounted(a, events, 2);
    sum += jitarena_kind_bytes(a, 0) + jitarena_kind_count(a, 1) + jitarena_phase_bytes(a, 0);
    sum += jitarena_total_bytes(a) + jitarena_total_count(a) + jitarena_used_bytes(a);
    sum += jitarena_reserved_bytes(a) + jitarena_page_count(a) + jitarena_largest_alloc(a);
    sum += (uint64_t)jitarena_limit_hit(a) + jitarena_kind_count_configured(a);
    sum += jitarena_phase_count_configured(a) + jitarena_phase_kind_bytes(a, 0, 1);
    jitarena_method_init(&method);
    method.name = "Program::Main()";
    method.context = 1;
    method.tier = "Tier1";
    if (jitarena_method_done(a, &method) != 0) {
        fprintf(stderr, "method_done: %s\n", jitarena_last_error_message());
        return 1;
    }
    jitarena_reset(a);
    jitarena_destroy(a);
    sum += jitarena_aggregate_methods() + jitarena_aggregate_total_bytes();
    sum += jitarena_aggregate_kind_bytes("ASTNode") + jitarena_aggregate_kind_count("BasicBlock");
    jitarena_aggregate_reset();
    if (jitarena_log_close() != 0 || jitarena_trace_close() != 0) {
        fprintf(stderr, "close: %s\n", jitarena_last_error_message());
        return 1;
    }
    printf("every entry point called (%llu)\n", (unsigned long long)sum);
    return 0;
}
