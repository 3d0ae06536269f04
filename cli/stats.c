/* Timing, summary statistics, the text table, and machine facts for demo and bench. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

double hbs_cli_now(void)
{
    struct timespec ts;
    /* CLOCK_MONOTONIC: wall-clock adjustments (NTP, the user) must not bend measurements. */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void hbs_cli_stats_compute(hbs_cli_stats *st, double *samples, size_t count)
{
    memset(st, 0, sizeof *st);
    if (count == 0)
        return;
    qsort(samples, count, sizeof *samples, cmp_double);
    st->count = count;
    st->min = samples[0];
    st->max = samples[count - 1];
    st->median = count % 2 ? samples[count / 2]
                           : (samples[count / 2 - 1] + samples[count / 2]) / 2;
}

static void print_cell(FILE *f, const hbs_cli_column *c, const char *text, int last)
{
    if (c->left && last)
        fputs(text, f); /* no trailing blanks */
    else if (c->left)
        fprintf(f, "%-*s", c->width, text);
    else
        fprintf(f, "%*s", c->width, text);
    fputs(last ? "\n" : "  ", f);
}

void hbs_cli_table_header(FILE *f, const hbs_cli_column *cols, size_t ncols)
{
    int total = 0;
    for (size_t i = 0; i < ncols; i++) {
        print_cell(f, &cols[i], cols[i].title, i + 1 == ncols);
        total += cols[i].width + (i + 1 < ncols ? 2 : 0);
    }
    for (int i = 0; i < total; i++)
        fputc('-', f);
    fputc('\n', f);
}

void hbs_cli_table_row(FILE *f, const hbs_cli_column *cols, size_t ncols,
                       const char *const *cells)
{
    for (size_t i = 0; i < ncols; i++)
        print_cell(f, &cols[i], cells[i], i + 1 == ncols);
    fflush(f); /* rows of a long run appear as they are measured */
}

void hbs_cli_cpu_model(char *out, size_t cap)
{
    char line[512];
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        /* x86 says "model name", some ARM kernels only "Hardware" or "CPU part". */
        if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Hardware", 8) == 0) {
            const char *colon = strchr(line, ':');
            if (!colon)
                continue;
            colon++;
            while (*colon == ' ' || *colon == '\t')
                colon++;
            snprintf(out, cap, "%.*s", (int)strcspn(colon, "\n"), colon);
            break;
        }
    }
    fclose(f);
}

void hbs_cli_backend_line(char *out, size_t cap)
{
    unsigned threads = hbs_get_threads();
    snprintf(out, cap, "CPU, hash backend %s, %u thread%s", hbs_backend_name(), threads,
             threads == 1 ? "" : "s");
}
