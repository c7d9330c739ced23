// `strata placement build|compile|decompile|test|diff|balance`: making,
// converting and checking placement maps before they are deployed.
#pragma once

// argv[0] is "placement"; returns the process exit code.
int cmd_placement(int argc, char **argv);
