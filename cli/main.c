/* hbs: command dispatch, usage and version. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "stateful.h"
#include "hbs/gpu.h"
#include "hbs/hbs.h"

static const hbs_cli_command *const commands[] = {
    &hbs_cli_cmd_keygen, &hbs_cli_cmd_sign,  &hbs_cli_cmd_verify,
    &hbs_cli_cmd_list,   &hbs_cli_cmd_key,   &hbs_cli_cmd_demo,  &hbs_cli_cmd_bench,
};
#define NUM_COMMANDS (sizeof commands / sizeof commands[0])

static const hbs_cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < NUM_COMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

static void print_usage(FILE *f)
{
    fprintf(f, "usage: hbs COMMAND [options]\n\n"
               "Hash-based signatures: SLH-DSA (FIPS 205), LMS/HSS and XMSS/XMSS^MT "
               "(SP 800-208).\n\ncommands:\n");
    for (size_t i = 0; i < NUM_COMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(f, "  %-8s %s\n", "help", "show the options of a command: hbs help COMMAND");
    fprintf(f, "\nA file argument of '-' means stdin or stdout. Exit status: 0 success, "
               "1 invalid signature (verify), 2 error.\n");
}

static int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stdout);
        return HBS_CLI_OK;
    }
    if (argc > 2)
        return hbs_cli_error("help", "expects one command name");
    const hbs_cli_command *cmd = find_command(argv[1]);
    if (!cmd)
        return hbs_cli_error("help", "unknown command '%s' (try 'hbs --help')", argv[1]);
    hbs_cli_print_help(stdout, cmd);
    return HBS_CLI_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return HBS_CLI_ERROR;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        print_usage(stdout);
        return HBS_CLI_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("hbs %s (library %s)\n", HBS_VERSION_STRING, hbs_version());
        return HBS_CLI_OK;
    }
    if (strcmp(name, "help") == 0)
        return cmd_help(argc - 1, argv + 1);
    const hbs_cli_command *cmd = find_command(name);
    if (!cmd) {
        if (name[0] == '-')
            return hbs_cli_error(name, "unknown option (try 'hbs --help')");
        return hbs_cli_error(name, "unknown command (try 'hbs --help')");
    }
    const int rc = cmd->run(argc - 1, argv + 1);
    hbs_gpu_release();
    return rc;
}
