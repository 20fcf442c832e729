/* Records methods whose method, tier, kind and phase names are hostile to markdown and HTML,
 * through the C API, into the stats log named by argv[1]. argv[2] is a byte multiplier (1 for
 * a baseline, 2 for a diff that grows), so that every method shows in memdiff's lists. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "jitarena.h"
#include "check.h"

static const char* const KINDS[] = {
    "<script>alert(1)</script>", "a|b||c", "[link](http://evil.example/)", "`tick`",
    "![img](http://evil.example/i.png)", "&amp;&#60;&lt;", "*star*_under_", "Normal"};
static const char* const PHASES[] = {"<img/src=x/onerror=alert(1)>", "|phase|", "~~strike~~"};
static const char* const METHODS[] = {
    "Evil\n# Heading\n<img src=x onerror=alert(1)>",
    "![img](http://evil.example/i.png)",
    "[click](javascript:alert(1))",
    "A|B|C</td><td>forged",
    "&amp; &#x3C;b&#x3E; &lt;i&gt;",
    "**bold** _em_ ~~s~~ $x^2$ `code`",
    "<https://evil.example/autolink> www.evil.example user@evil.example @dotnet/jit #123",
    "Ns.Class`1[System.__Canon]:Method(int):this\r\n| --- |",
    "\x1b[31mred\x1b[0m \xe2\x80\xae" "evil",
    "</details><details open><summary>forged</summary>"};

int main(int argc, char** argv) {
    jitarena_config cfg;
    jitarena* a;
    unsigned m, i;
    unsigned scale;
    CHECK(argc == 3);
    scale = (unsigned)atoi(argv[2]);
    CHECK(jitarena_log_open(argv[1]) == 0);
    jitarena_config_init(&cfg);
    cfg.kind_names = KINDS;
    cfg.kind_count = 8;
    cfg.phase_names = PHASES;
    cfg.phase_count = 3;
    a = jitarena_create(&cfg);
    CHECK(a != NULL);
    for (m = 0; m < sizeof METHODS / sizeof METHODS[0]; m++) {
        jitarena_method method;
        jitarena_method_init(&method);
        method.name = METHODS[m];
        method.context = -1; /* matched by name and tier */
        method.tier = m % 2 ? "Full<Opts>|x" : "MinOpts";
        for (i = 0; i < 8 * 3; i++) {
            jitarena_set_phase(a, i % 3);
            CHECK(jitarena_alloc(a, (size_t)(1000 + 100 * m) * scale, i % 8) != NULL);
        }
        CHECK(jitarena_method_done(a, &method) == 0);
        jitarena_reset(a);
    }
    jitarena_destroy(a);
    CHECK(jitarena_log_close() == 0);
    return 0;
}
