// Write a journal-media plugin as a C++ class and export it with one macro:
//
//   class MyJournal : public strata::sdk::Journal {
//    public:
//     static void create(const strata::sdk::OpenArgs &args, uint64_t capacity);
//     static std::unique_ptr<MyJournal> open(const strata::sdk::OpenArgs &args);
//     static void destroy(const strata::sdk::OpenArgs &args);
//     ... overrides ...
//   };
//   STRATA_JOURNAL_PLUGIN(MyJournal, "mine", "0.1.0", "one line", kOptions)
//
// Semantics of each method are those of strata/journal.h; failures are
// reported by throwing strata::sdk::Error.
#pragma once

#include <functional>
#include <iterator>
#include <memory>

#include "strata/cpp/plugin_support.hpp"
#include "strata/journal.h"

namespace strata::sdk {

class Journal {
 public:
  virtual ~Journal() = default;
  virtual uint64_t capabilities() const = 0;
  // Return a negative errno from `visit` to abort; replay then throws it.
  virtual strata_journal_replay_result replay(
      uint64_t after_seq, const std::function<int(uint64_t, const void *, size_t)> &visit) = 0;
  virtual void append(uint64_t seq, const void *data, size_t len, strata_journal_done_cb cb,
                      void *arg) = 0;
  virtual void trim(uint64_t upto_seq) = 0;
  virtual void flush() = 0;
  virtual strata_journal_stat stat() = 0;
};

namespace detail {

template <class T>
struct JournalAdapter {
  static Journal *self(strata_journal *j) { return reinterpret_cast<Journal *>(j); }

  static int create(const strata_open_args *a, uint64_t capacity, strata_err *err) {
    return guard(err, [&] {
      T::create(OpenArgs(a), capacity);
      return 0;
    });
  }
  static int open(const strata_open_args *a, strata_journal **out, strata_err *err) {
    *out = nullptr;
    return guard(err, [&] {
      std::unique_ptr<Journal> j = T::open(OpenArgs(a));
      *out = reinterpret_cast<strata_journal *>(j.release());
      return 0;
    });
  }
  static void close(strata_journal *j) {
    strata_err ignored;
    guard(&ignored, [&] {
      delete self(j);
      return 0;
    });
  }
  static uint64_t capabilities(strata_journal *j) { return self(j)->capabilities(); }
  static int replay(strata_journal *j, uint64_t after_seq, strata_journal_record_cb cb, void *ctx,
                    strata_journal_replay_result *result, strata_err *err) {
    return guard(err, [&] {
      strata_journal_replay_result r = self(j)->replay(
          after_seq, [&](uint64_t seq, const void *d, size_t n) { return cb(ctx, seq, d, n); });
      if (result) {
        uint32_t size = result->struct_size ? result->struct_size : sizeof r;
        r.struct_size = size < sizeof r ? size : sizeof r;
        std::memcpy(result, &r, r.struct_size);
      }
      return 0;
    });
  }
  static int append(strata_journal *j, uint64_t seq, const void *data, size_t len,
                    strata_journal_done_cb cb, void *arg, strata_err *err) {
    return guard(err, [&] {
      self(j)->append(seq, data, len, cb, arg);
      return 0;
    });
  }
  static int trim(strata_journal *j, uint64_t upto, strata_err *err) {
    return guard(err, [&] {
      self(j)->trim(upto);
      return 0;
    });
  }
  static int flush(strata_journal *j, strata_err *err) {
    return guard(err, [&] {
      self(j)->flush();
      return 0;
    });
  }
  static int stat(strata_journal *j, strata_journal_stat *out) {
    strata_err ignored;
    return guard(&ignored, [&] {
      strata_journal_stat s = self(j)->stat();
      uint32_t size = out->struct_size ? out->struct_size : sizeof s;
      s.struct_size = size < sizeof s ? size : sizeof s;
      std::memcpy(out, &s, s.struct_size);
      return 0;
    });
  }
  static int destroy(const strata_open_args *a, strata_err *err) {
    return guard(err, [&] {
      T::destroy(OpenArgs(a));
      return 0;
    });
  }

  static constexpr strata_journal_ops ops = {sizeof(strata_journal_ops), 0, create, open, close,
                                             capabilities, replay, append, trim, flush, stat,
                                             destroy};
};

}  // namespace detail
}  // namespace strata::sdk

#define STRATA_JOURNAL_PLUGIN(Class, name, version, description, options_array) \
  static const strata_plugin_descriptor strata_plugin_descriptor_ = {           \
      sizeof(strata_plugin_descriptor),                                         \
      STRATA_ABI_MAJOR,                                                         \
      STRATA_ABI_MINOR,                                                         \
      STRATA_KIND_JOURNAL,                                                      \
      0,                                                                        \
      name,                                                                     \
      version,                                                                  \
      description,                                                              \
      &::strata::sdk::detail::JournalAdapter<Class>::ops,                       \
      options_array,                                                            \
      std::size(options_array),                                                 \
      {}};                                                                      \
  STRATA_DEFINE_PLUGIN_ENTRY(&strata_plugin_descriptor_)
