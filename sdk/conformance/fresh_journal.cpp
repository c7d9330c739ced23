// FreshJournal: a journal of the plugin under test in a private directory.
#include "kit.h"

namespace strata::conformance {

FreshJournal::FreshJournal(uint64_t capacity,
                           std::vector<std::pair<std::string, std::string>> option_overrides)
    : dir_("journal"), args_(dir_.path() + "/journal", std::move(option_overrides)) {
  recreate(capacity);
}

FreshJournal::~FreshJournal() {
  close();
  // Plugins that keep media outside the directory (tmpfs) release it here.
  strata_err ignored{};
  ops().destroy(args_.get(), &ignored);
}

uint64_t FreshJournal::caps() const {
  if (!j_) throw std::logic_error("FreshJournal::caps on a closed journal");
  return ops().capabilities(j_);
}

void FreshJournal::close() {
  if (j_) ops().close(j_);
  j_ = nullptr;
}

void FreshJournal::open() {
  strata_err err{};
  strata_journal *j = nullptr;
  int rc = ops().open(args_.get(), &j, &err);
  if (rc != 0) throw CallFailed("open(" + path() + ")", rc, err);
  if (!j) throw std::runtime_error("open(" + path() + ") returned 0 but no instance");
  j_ = j;
}

void FreshJournal::reopen() {
  close();
  open();
}

void FreshJournal::recreate(uint64_t capacity) {
  close();
  strata_err err{};
  int rc = ops().create(args_.get(), capacity, &err);
  if (rc != 0)
    throw CallFailed("create(" + path() + ", " + std::to_string(capacity) + ")", rc, err);
  open();
}

strata_journal_stat FreshJournal::stat() const {
  strata_journal_stat st{};
  st.struct_size = sizeof st;
  int rc = ops().stat(j_, &st);
  strata_err none{};
  if (rc != 0) throw CallFailed("stat(" + path() + ")", rc, none);
  return st;
}

}  // namespace strata::conformance
