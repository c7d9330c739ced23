// The target that compiles Catch2's precompiled header for the test targets
// (cmake/StrataCatchPch.cmake); it has no code of its own.
int main() { return 0; }
