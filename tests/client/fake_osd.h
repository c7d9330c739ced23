// A stand-in OSD for client tests: boots into a real in-process monitor,
// serves client requests from an in-memory object table with the OSD's op
// semantics (core/osd/op_exec.h), deduplicates writes by (client, tid), and
// lets a test decide, per request, to execute it, drop it, close the
// connection (before or after executing), or answer retryEpoch — the
// faults the Objecter must ride through.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/status.h"
#include "mon/mon_client.h"
#include "msg/messenger.h"

namespace clienttest {

struct ReceivedOp {
  std::string client;
  uint64_t tid = 0;
  std::string oid;
  uint32_t pool = 0;
  uint32_t seed = 0;
  uint64_t map_epoch = 0;
  bool is_write = false;
};

enum class Fault {
  kNone,                // execute and reply
  kDrop,                // never answer
  kCloseBefore,         // close the connection without executing
  kCloseAfterApply,     // execute, then close instead of replying
  kRetryNextEpoch,      // answer retryEpoch = current epoch + 1
  kRetrySameEpoch,      // answer retryEpoch = the op's own epoch (not ready for the PG)
};

class FakeOsd {
 public:
  FakeOsd(int id, std::string host, std::string mon_addr,
          std::map<std::string, std::string> keys, strata::Logger &log);
  ~FakeOsd();

  // Listens on 127.0.0.1 (any port), connects to the monitor and boots.
  strata::Status start();
  void stop();

  int id() const { return id_; }
  const std::string &addr() const { return addr_; }
  uint64_t epoch() const;

  // Decides what happens to each client op; called on the messenger
  // thread. Default: kNone.
  void set_fault(std::function<Fault(const ReceivedOp &)> f);
  std::vector<ReceivedOp> received() const;
  // How many times a write with (client, tid) was applied (not replayed).
  int applied(const std::string &client, uint64_t tid) const;
  // Replies sent with replayed = true.
  int replays() const;
  // As a real OSD applying an auth version that removes `entity`'s key:
  // refuses it from now on and closes its open connections.
  void revoke(const std::string &entity);

 private:
  struct Object;
  struct Store;
  void on_message(const strata::msg::ConnectionRef &c, strata::msg::Message &&m);
  void handle_op(const strata::msg::ConnectionRef &c, const strata::msg::Message &m);
  void handle_pg_list(const strata::msg::ConnectionRef &c, const strata::msg::Message &m);
  void handle_pg_command(const strata::msg::ConnectionRef &c, const strata::msg::Message &m);

  const int id_;
  const std::string host_;
  const std::string mon_addr_;
  const std::map<std::string, std::string> keys_;
  // What the messenger's lookup accepts: keys_ minus revoked entities.
  std::shared_ptr<std::mutex> accepted_mu_ = std::make_shared<std::mutex>();
  std::shared_ptr<std::map<std::string, std::string>> accepted_;
  strata::Logger &log_;
  std::string addr_;
  std::unique_ptr<strata::msg::Messenger> messenger_;
  std::unique_ptr<strata::mon::MonClient> mon_;

  mutable std::mutex mu_;
  std::function<Fault(const ReceivedOp &)> fault_;
  std::vector<ReceivedOp> received_;
  std::map<std::pair<std::string, uint64_t>, int> applied_;
  std::map<std::pair<std::string, uint64_t>, std::pair<int, uint64_t>> done_;  // rc, version
  int replays_ = 0;
  std::unique_ptr<Store> store_;
};

}  // namespace clienttest
