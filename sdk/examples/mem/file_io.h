// The few POSIX file operations the plugin needs, reporting failures as
// strata::sdk::Error with the file name and errno.
#pragma once

#include <string>
#include <string_view>

namespace mem {

// Writes `bytes` to `path` and fsyncs it. The file is replaced if it exists.
void write_file_durably(const std::string &path, std::string_view bytes);
// Makes a rename or unlink inside `dir` durable.
void sync_directory(const std::string &dir);
// The whole file; throws Error(ENOENT) when it does not exist.
std::string read_file(const std::string &path);

}  // namespace mem
