// The checkpoint image: a mem store's whole content in one file, replaced
// atomically (write a temporary, fsync, rename, fsync the directory), so
// that after a crash the store is exactly what the last checkpoint saved.
#pragma once

#include <cstdint>
#include <string>

#include "store_content.h"

namespace mem {

// The image file's name inside the store directory.
inline constexpr const char kImageName[] = "mem.image";

// Throws strata::sdk::Error on I/O failure.
void save_image(const std::string &dir, const StoreContent &content, uint64_t seq);
// Throws strata::sdk::Error: ENOENT without an image, EUCLEAN when the file
// is truncated or its checksum does not match.
void load_image(const std::string &dir, StoreContent *content, uint64_t *seq);

}  // namespace mem
