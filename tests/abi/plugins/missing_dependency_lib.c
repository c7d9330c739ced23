/* A shared library a test plugin links against and the loader cannot find
 * (built outside the plugin directory, no rpath): dlopen of the plugin must
 * report the missing dependency by name. */
int strata_abi_missing_dependency_answer(void) { return 42; }
