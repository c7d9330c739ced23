// A raw-socket NBD client for the server's tests: every byte it sends is
// spelled out here, so the tests can send what no real client would (bad
// magic, unknown options, a write cut short). Throws std::runtime_error on
// a short read or a reply that is not what the wire layout allows, so a
// failing test fails instead of hanging (reads time out after 10 s).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "block_device.h"
#include "nbd_server.h"

namespace rbdtest {

struct OptionReply {
  uint32_t option = 0, type = 0;
  std::string data;
};

struct SimpleReply {
  uint32_t error = 0;
  uint64_t cookie = 0;
  std::string data;
};

struct Chunk {
  uint16_t flags = 0, type = 0;
  uint64_t cookie = 0;
  std::string payload;
  bool done() const { return flags & 1; }
};

struct ExportInfo {
  uint64_t size = 0;
  uint16_t flags = 0;
};

class TestClient {
 public:
  explicit TestClient(const std::string &unix_path);
  ~TestClient();
  TestClient(const TestClient &) = delete;
  TestClient &operator=(const TestClient &) = delete;

  // Handshake pieces.
  uint16_t read_greeting();  // checks both magics, returns the handshake flags
  void send_client_flags(uint32_t flags);
  void send_option(uint32_t option, const std::string &data, uint64_t magic = 0x49484156454f5054ull);
  OptionReply read_option_reply();
  // Greeting, client flags (fixed newstyle, no zeroes), then optionally
  // STRUCTURED_REPLY and SET_META_CONTEXT base:allocation, then GO.
  ExportInfo go(const std::string &name = "", bool structured = false, bool base_allocation = false);
  static std::string info_request(const std::string &name, const std::vector<uint16_t> &infos);
  static std::string meta_request(const std::string &name, const std::vector<std::string> &queries);

  // Transmission.
  void send_request(uint16_t type, uint16_t flags, uint64_t cookie, uint64_t offset, uint32_t length,
                    const std::string &payload = {}, uint32_t magic = 0x25609513);
  SimpleReply read_simple(uint32_t data_len = 0);
  Chunk read_chunk();
  // Reads chunks up to the one flagged done.
  std::vector<Chunk> read_structured();

  void send_raw(const std::string &bytes);
  std::string read_raw(size_t n);
  // True when the server closed the connection (EOF) within the timeout.
  bool closed_by_server();
  void close();

 private:
  int fd_ = -1;
};

// A server on a fresh Unix socket path serving `device` as export "" (and
// "other"), stopped at destruction.
struct TestServer {
  explicit TestServer(std::shared_ptr<strata::rbd::BlockDevice> device,
                      strata::rbd::NbdServerOptions opts = {});
  ~TestServer();
  std::string path;
  std::unique_ptr<strata::rbd::NbdServer> server;
};

// Big-endian fields for building and checking test payloads.
void be16(std::string &s, uint16_t v);
void be32(std::string &s, uint32_t v);
void be64(std::string &s, uint64_t v);
uint16_t be16_at(const std::string &s, size_t pos);
uint32_t be32_at(const std::string &s, size_t pos);
uint64_t be64_at(const std::string &s, size_t pos);

}  // namespace rbdtest
