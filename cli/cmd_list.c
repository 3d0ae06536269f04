/* hbs list: the supported algorithms, one name a line, spelled as in the standards. */
#include "cli.h"
#include "stateful.h"

static const hbs_cli_option options[] = {{0, 0, NULL, NULL, NULL}};

static int run(int argc, char **argv)
{
    hbs_cli_parser ps;
    const char *v;
    int id;
    hbs_cli_parser_init(&ps, &hbs_cli_cmd_list, argc, argv);
    while ((id = hbs_cli_parser_next(&ps, &v)) > 0) {
    }
    if ((id = hbs_cli_parser_end(id)) != HBS_CLI_OK)
        return id == HBS_CLI_DONE ? HBS_CLI_OK : id;

    for (int i = 0; i < HBS_SLHDSA_NUM_PARAMS; i++)
        puts(hbs_slhdsa_name(hbs_slhdsa_params_get((hbs_slhdsa_id)i)));
    hbs_cli_stateful_list(stdout);
    if (fflush(stdout) != 0)
        return hbs_cli_error("stdout", "write failed");
    return HBS_CLI_OK;
}

const hbs_cli_command hbs_cli_cmd_list = {
    "list", run, "", "List the supported algorithms (parameter sets).", NULL, options,
};
