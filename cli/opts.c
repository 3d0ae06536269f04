/* The option parser shared by all commands, and the help text built from its tables. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void hbs_cli_parser_init(hbs_cli_parser *ps, const hbs_cli_command *cmd, int argc, char **argv)
{
    ps->cmd = cmd;
    ps->argc = argc;
    ps->argv = argv;
    ps->next = 1;
    ps->positional = 0;
    ps->after_dashdash = 0;
}

static const hbs_cli_option *find_long(const hbs_cli_option *opts, const char *name,
                                       size_t len)
{
    for (; opts->id; opts++)
        if (strlen(opts->long_name) == len && strncmp(opts->long_name, name, len) == 0)
            return opts;
    return NULL;
}

static const hbs_cli_option *find_short(const hbs_cli_option *opts, char c)
{
    for (; opts->id; opts++)
        if (opts->short_name && opts->short_name == c)
            return opts;
    return NULL;
}

static int bad_option(const hbs_cli_parser *ps, const char *arg, const char *why)
{
    hbs_cli_error(ps->cmd->name, "%s '%s' (try 'hbs help %s')", why, arg, ps->cmd->name);
    return HBS_CLI_PARSE_ERROR;
}

int hbs_cli_parser_next(hbs_cli_parser *ps, const char **value)
{
    *value = NULL;
    if (ps->next >= ps->argc)
        return 0;
    const char *arg = ps->argv[ps->next++];

    if (ps->positional) {
        if (!ps->after_dashdash && strcmp(arg, "--") == 0) {
            ps->after_dashdash = 1;
            return hbs_cli_parser_next(ps, value);
        }
        if (ps->after_dashdash || arg[0] != '-' || arg[1] == '\0') {
            *value = arg;
            return HBS_CLI_POSITIONAL;
        }
    }
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
        hbs_cli_print_help(stdout, ps->cmd);
        return HBS_CLI_PARSE_HELP;
    }
    /* "-" alone is a value (stdin/stdout), so here it can only be a stray argument. */
    if (arg[0] != '-' || arg[1] == '\0')
        return bad_option(ps, arg, "unexpected argument");

    const hbs_cli_option *opt;
    const char *inline_value = NULL;
    if (arg[1] == '-') {
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        opt = find_long(ps->cmd->options, name, len);
        if (eq)
            inline_value = eq + 1;
    } else {
        /* Short options take no attached value ("-sFILE"): one letter, one argument. */
        opt = arg[2] == '\0' ? find_short(ps->cmd->options, arg[1]) : NULL;
    }
    if (!opt)
        return bad_option(ps, arg, "unknown option");

    if (opt->metavar && opt->metavar[0] == '[') {
        *value = inline_value; /* an optional value comes only inline: "--gpu=auto" */
        return opt->id;
    }
    if (!opt->metavar) {
        if (inline_value)
            return bad_option(ps, arg, "option takes no value:");
        return opt->id;
    }
    if (inline_value) {
        *value = inline_value;
        return opt->id;
    }
    if (ps->next >= ps->argc)
        return bad_option(ps, arg, "missing value after");
    *value = ps->argv[ps->next++];
    return opt->id;
}

int hbs_cli_parser_end(int result)
{
    if (result == HBS_CLI_PARSE_HELP)
        return HBS_CLI_DONE;
    return result == 0 ? HBS_CLI_OK : HBS_CLI_ERROR;
}

void hbs_cli_print_help(FILE *f, const hbs_cli_command *cmd)
{
    fprintf(f, "usage: hbs %s %s\n\n%s\n", cmd->name, cmd->synopsis, cmd->summary);
    if (cmd->details)
        fprintf(f, "\n%s\n", cmd->details);
    fprintf(f, "\noptions:\n");
    for (const hbs_cli_option *o = cmd->options; o->id; o++) {
        char left[64];
        /* an optional value follows the name without a space: "--gpu[=auto]" */
        const char *space = o->metavar && o->metavar[0] != '[' ? " " : "";
        if (o->short_name)
            snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->long_name, space,
                     o->metavar ? o->metavar : "");
        else
            snprintf(left, sizeof left, "    --%s%s%s", o->long_name, space,
                     o->metavar ? o->metavar : "");
        fprintf(f, "  %-28s %s\n", left, o->help);
    }
    fprintf(f, "  %-28s %s\n", "-h, --help", "show this help");
}

int hbs_cli_parse_uint(const char *opt, const char *s, unsigned long min, unsigned long max,
                       unsigned long *out)
{
    char *end;
    errno = 0;
    /* strtoul accepts a sign and wraps negatives around: allow digits only. */
    if (s[0] < '0' || s[0] > '9')
        return hbs_cli_error(opt, "'%s' is not a number", s);
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end != '\0')
        return hbs_cli_error(opt, "'%s' is not a number", s);
    if (v < min || v > max)
        return hbs_cli_error(opt, "%lu is out of range (%lu to %lu)", v, min, max);
    *out = v;
    return HBS_CLI_OK;
}

int hbs_cli_parse_seconds(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !isfinite(v) || v < 0 || v > 86400)
        return hbs_cli_error(opt, "'%s' is not a number of seconds (0 to 86400)", s);
    *out = v;
    return HBS_CLI_OK;
}
