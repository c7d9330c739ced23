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
// A plugin without options leaves the last argument out.
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
  // `visit` returns 0 to go on or a negative errno to abort; replay then
  // throws it. (The adapter turns the host's positive "stop" into an abort
  // and hands the host its value back, as plugin.h's visitor convention says.)
  virtual strata_journal_replay_result replay(
      uint64_t after_seq, const std::function<int(uint64_t, const void *, size_t)> &visit) = 0;
  virtual void append(uint64_t seq, const void *data, size_t len, strata_journal_done_cb cb,
                      void *arg) = 0;
  virtual void trim(uint64_t upto_seq) = 0;
  virtual void flush() = 0;
  virtual strata_journal_stat stat() = 0;
  // ABI 1.3 control call: 0 (or a count) when `op` is served, -EOPNOTSUPP
  // for an op this journal does not implement (the default); may throw Error.
  virtual int control(int op, void *arg) {
    (void)op, (void)arg;
    return -EOPNOTSUPP;
  }
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
    VisitStop stop;
    int rc = guard(err, [&] {
      strata_journal_replay_result r =
          self(j)->replay(after_seq, [&](uint64_t seq, const void *d, size_t n) {
            int v = cb(ctx, seq, d, n);
            stop.go_on(v);
            return v > 0 ? -ECANCELED : v;
          });
      if (result) {
        uint32_t size = result->struct_size ? result->struct_size : sizeof r;
        r.struct_size = size < sizeof r ? size : sizeof r;
        std::memcpy(result, &r, r.struct_size);
      }
      return 0;
    });
    return stop.value ? stop.value : rc;
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
  static int control(strata_journal *j, int op, void *arg, strata_err *err) {
    return guard(err, [&] { return self(j)->control(op, arg); });
  }

  static constexpr strata_journal_ops ops = {sizeof(strata_journal_ops), 0, create, open, close,
                                             capabilities, replay, append, trim, flush, stat,
                                             destroy, control};
};

}  // namespace detail
}  // namespace strata::sdk

#define STRATA_JOURNAL_PLUGIN(Class, name, version, description, ...)           \
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
      ::strata::sdk::detail::OptionTable{__VA_ARGS__}.specs,                    \
      ::strata::sdk::detail::OptionTable{__VA_ARGS__}.count,                    \
      {}};                                                                      \
  STRATA_DEFINE_PLUGIN_ENTRY(&strata_plugin_descriptor_)
