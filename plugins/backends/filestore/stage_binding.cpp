#include "filestore/stage_binding.h"

#include <fcntl.h>

#include "filestore/file_data.h"
#include "filestore/posix_file.h"

namespace strata::filestore {

BindMethod bind_stage_file(const std::string &stage_path, DataFiles &data, FileId id) {
  UniqueFd stage = open_file(stage_path, O_RDONLY);
  uint64_t size = stat_fd(stage.get(), stage_path).size;
  SharedFd out = data.create(id);
  return clone_file_data(stage.get(), out->get(), size, data.path(id)) ? BindMethod::reflink
                                                                       : BindMethod::copy;
}

}  // namespace strata::filestore
