#include "mount_client.h"

#include <cerrno>
#include <cstring>
#include <sstream>

#include "proto_convert.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/frontend_client.h"

namespace strata::fuse {

using strata::sdk::Error;

std::unique_ptr<MountClient> MountClient::start(const strata_frontend_host *host,
                                                strata_cluster_t cluster,
                                                const strata::sdk::FrontendOptions &options) {
  if (!STRATA_CLIENT_API_HAS(host->client, session_open))
    throw sdk::Error(ENOTSUP, "the host's client table has no service sessions (client API 1.2)");
  return std::make_unique<MountClient>(host, cluster, parse_mount_settings(options.pairs()));
}

MountClient::MountClient(const strata_frontend_host *host, strata_cluster_t cluster,
                         const MountSettings &settings)
    : host_(host), strata_api(host->client), cluster_(cluster), settings_(settings) {
  char id[128] = "";
  int64_t n = strata_cluster_instance_id(cluster, id, sizeof id);
  std::string client_name =
      (n > 0 ? std::string(id) : std::string("client")) + ":" + settings_.mountpoint;

  FileDataOptions data_options;
  data_options.on_error = [this](const std::string &line) { log(STRATA_LOG_WARN, line); };
  data_ = FileData::create(host->client, cluster, data_options);
  if (!data_) log(STRATA_LOG_WARN, "no file data path: reads and writes fail with EIO");

  try {
    worker_ = std::make_unique<MessageWorker>();
    transport_ = std::make_unique<SessionTransport>(host->client, cluster);
    MdsHandlers handlers;
    handlers.on_revoke = [this](std::shared_ptr<ReceivedMessage> m) {
      // Revokes that arrive while one is handled wait to be handled
      // together (one Release for all of them).
      bool first = false;
      {
        std::lock_guard<std::mutex> l(revokes_mu_);
        first = revokes_.empty();
        revokes_.push_back(std::move(m));
      }
      if (first) worker_->post([this] { handle_queued_revokes(); });
    };
    handlers.on_lock_granted = [this](std::shared_ptr<ReceivedMessage> m) {
      worker_->post([this, m] { fs_->handle_lock_granted(m->root<fsproto::LockGranted>()); });
    };
    handlers.on_async_reply = [this](std::shared_ptr<ReceivedMessage> m) {
      if (fs_) fs_->absorb_async(m->root<fsproto::Reply>());
    };
    MdsClientSettings ms{client_name, settings_.fs_name, settings_.mount_root};
    ms.async = settings_.async_metadata;
    ms.batch_delay_us = settings_.batch_delay_us;
    mds_ = std::make_unique<MdsClient>(*transport_, ms, handlers);
    fs_ = std::make_unique<Filesystem>(*mds_, data_.get(), settings_,
                                       [this](int level, const std::string &m) { log(level, m); });

    if (int rc = transport_->open(settings_.fs_name, mds_.get()); rc < 0)
      throw Error(rc, "filesystem '" + settings_.fs_name + "': cannot open a session with its MDS" +
                          (rc == -ENOENT ? " (no such filesystem: `strata fs ls`)" : "") + ": " +
                          std::strerror(-rc));
    std::string why;
    if (int rc = mds_->wait_welcome(settings_.connect_timeout_ms, &why); rc < 0)
      throw Error(rc, "filesystem '" + settings_.fs_name + "': the MDS did not welcome us: " +
                          (why.empty() ? std::string(std::strerror(-rc)) : why));
    auto welcome = mds_->welcome()->root<fsproto::Welcome>();
    fs_->set_root(to_attr(welcome.getRoot()));
    fs_->set_max_file_size(welcome.getMaxFileSize());
    fs_->set_inline_max(welcome.getInlineMax());
    fs_->set_data_pool(welcome.getDataPool());
    fs_->set_lease_ms(welcome.getLeaseMs());

    mount_ = std::make_unique<FuseMount>();
    if (int rc = mount_->mount(*fs_, settings_, &why); rc < 0) throw Error(rc, why);
    fs_->set_session(mount_->session());
    upkeep_ = std::thread([this] { upkeep_loop(); });
    mount_->serve(settings_.max_threads, [this](int rc) {
      // Unmounted from outside (fusermount3 -u, umount): the host stops us.
      host_->request_stop(host_->ctx, rc < 0 ? rc : 0,
                          rc < 0 ? "the FUSE session failed" : "unmounted");
    });
  } catch (...) {
    teardown();
    throw;
  }
}

void MountClient::handle_queued_revokes() {
  std::vector<std::shared_ptr<ReceivedMessage>> taken;
  {
    std::lock_guard<std::mutex> l(revokes_mu_);
    taken.swap(revokes_);
  }
  std::vector<fsproto::Revoke::Reader> readers;
  for (const auto &m : taken) readers.push_back(m->root<fsproto::Revoke>());
  if (!readers.empty()) fs_->handle_revokes(readers);
}

void MountClient::log(int level, const std::string &msg) const {
  if (host_->log) host_->log(host_->ctx, level, msg.c_str());
}

void MountClient::upkeep_loop() {
  std::unique_lock<std::mutex> l(upkeep_mu_);
  while (!upkeep_cv_.wait_for(l, std::chrono::seconds(1), [&] { return upkeep_stop_; })) {
    l.unlock();
    fs_->maintain();
    l.lock();
  }
}

void MountClient::teardown() {
  {
    std::lock_guard<std::mutex> l(upkeep_mu_);
    upkeep_stop_ = true;
  }
  upkeep_cv_.notify_all();
  if (mds_) mds_->shutdown();  // a renewal in flight returns
  if (upkeep_.joinable()) upkeep_.join();
  if (fs_) fs_->set_session(nullptr);
  if (mount_) mount_->unmount();
  if (transport_) transport_->close();  // no more callbacks
  if (mds_) mds_->shutdown();
  worker_.reset();  // runs what was queued (its Releases fail: not connected)
  mount_.reset();
  fs_.reset();
  mds_.reset();
  transport_.reset();
  data_.reset();
}

int MountClient::stop(std::string *why) {
  if (stopped_) return 0;
  stopped_ = true;
  fs_->set_session(nullptr);
  mount_->unmount();  // the kernel flushes and releases every open file first
  int rc = fs_->flush_everything(why);
  capnp::MallocMessageBuilder bye;
  bye.initRoot<fsproto::Goodbye>().setReason("unmount");
  mds_->send(fsproto::MSG_GOODBYE, bye);
  teardown();
  return rc;
}

MountClient::~MountClient() {
  if (!stopped_) {
    std::string why;
    stop(&why);
  }
}

std::string MountClient::status_line() const {
  auto s = mds_->stats();
  auto c = fs_->cache().counts();
  std::ostringstream o;
  o << "filesystem " << settings_.fs_name << " on " << settings_.mountpoint << ", MDS "
    << (s.connected ? "connected" : "disconnected") << ", session " << s.session_id << ", "
    << s.unsafe_now << " unsafe, " << c.entries << " cached entries, " << fs_->open_files()
    << " open files";
  return o.str();
}

std::string MountClient::status_json() const {
  auto s = mds_->stats();
  auto c = fs_->cache().counts();
  std::ostringstream o;
  // Names and paths are the user's: escape what JSON needs.
  auto str = [](const std::string &v) {
    std::string out = "\"";
    for (char ch : v) {
      if (ch == '"' || ch == '\\') out += '\\';
      if (static_cast<unsigned char>(ch) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", ch);
        out += buf;
        continue;
      }
      out += ch;
    }
    return out + "\"";
  };
  o << "{\"fs\":" << str(settings_.fs_name) << ",\"mountpoint\":" << str(settings_.mountpoint)
    << ",\"mds_connected\":" << (s.connected ? "true" : "false")
    << ",\"session_id\":" << s.session_id << ",\"requests\":" << s.requests
    << ",\"unsafe\":" << s.unsafe_now << ",\"waiting\":" << s.waiting_now
    << ",\"replayed\":" << s.replayed << ",\"reconnects\":" << s.reconnects
    << ",\"sessions_lost\":" << s.sessions_lost << ",\"cache\":{\"dirs\":" << c.dirs
    << ",\"complete_dirs\":" << c.complete_dirs << ",\"entries\":" << c.entries
    << ",\"inodes\":" << c.inodes << "}"
    << ",\"kernel_inodes\":" << fs_->known_inodes() << ",\"open_files\":" << fs_->open_files()
    << ",\"deferred_writebacks\":" << fs_->deferred_writebacks()
    << ",\"killpriv_v2\":" << (fs_->killpriv_v2() ? "true" : "false") << "}";
  return o.str();
}

std::string MountClient::metrics() const {
  std::ostringstream o;
  o << "# HELP strata_fuse_requests_total FUSE requests by operation.\n"
       "# TYPE strata_fuse_requests_total counter\n";
  for (size_t i = 0; i < size_t(Op::kCount); ++i)
    o << "strata_fuse_requests_total{op=\"" << op_name(Op(i)) << "\"} "
      << fs_->counters().get(Op(i)) << "\n";
  auto s = mds_->stats();
  auto c = fs_->cache().counts();
  o << "# HELP strata_fuse_cache_hits_total Answers from the lease cache (no MDS round trip).\n"
       "# TYPE strata_fuse_cache_hits_total counter\n"
    << "strata_fuse_cache_hits_total " << fs_->counters().cache_hits() << "\n"
    << "# HELP strata_fuse_listing_prefetches_total Lookups that read their directory's listing "
       "instead (an exclusive directory this client had not listed).\n"
       "# TYPE strata_fuse_listing_prefetches_total counter\n"
    << "strata_fuse_listing_prefetches_total " << fs_->counters().listing_prefetches() << "\n"
    << "# HELP strata_fuse_local_truncates_total Truncates of files held under fileWrite, done "
       "without an MDS round trip (the size goes with the next report).\n"
       "# TYPE strata_fuse_local_truncates_total counter\n"
    << "strata_fuse_local_truncates_total " << fs_->counters().local_truncates() << "\n"
    << "# HELP strata_fuse_local_times_total Setattrs of a file's mtime and ctime alone (the "
       "kernel's writeback cache flushing them) kept for its next size report.\n"
       "# TYPE strata_fuse_local_times_total counter\n"
    << "strata_fuse_local_times_total " << fs_->counters().local_times_count() << "\n"
    << "# HELP strata_fuse_mds_requests_total Requests sent to the MDS.\n"
       "# TYPE strata_fuse_mds_requests_total counter\n"
    << "strata_fuse_mds_requests_total " << s.requests << "\n"
    << "# HELP strata_fuse_mds_requests_by_kind_total Requests sent to the MDS by kind, "
       "waited for (sync) or answered locally and sent in batches (async).\n"
       "# TYPE strata_fuse_mds_requests_by_kind_total counter\n";
  for (size_t k = 0; k < MdsClientStats::kKinds; ++k) {
    if (s.sync_by_kind[k])
      o << "strata_fuse_mds_requests_by_kind_total{kind=\"" << request_kind_name(k)
        << "\",mode=\"sync\"} " << s.sync_by_kind[k] << "\n";
    if (s.async_by_kind[k])
      o << "strata_fuse_mds_requests_by_kind_total{kind=\"" << request_kind_name(k)
        << "\",mode=\"async\"} " << s.async_by_kind[k] << "\n";
  }
  // One metric: its HELP and TYPE lines, then its value.
  auto metric = [&](const char *name, const char *type, uint64_t value, const char *help) {
    o << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n"
      << name << " " << value << "\n";
  };
  metric("strata_fuse_mds_async_requests_total", "counter", s.async_requests,
         "Changes answered locally and sent in batches (asynchronous metadata).");
  metric("strata_fuse_mds_async_merged_total", "counter", s.async_merged,
         "Setattrs and renames folded into a request queued before them (a setattr, a create).");
  metric("strata_fuse_mds_batches_total", "counter", s.batches, "Batch messages sent to the MDS.");
  metric("strata_fuse_mds_async_refused_total", "counter", s.async_failed,
         "Asynchronous changes the MDS refused.");
  metric("strata_fuse_mds_async_unsafe", "gauge", s.async_unsafe,
         "Asynchronous changes not yet safe.");
  metric("strata_fuse_delegated_inodes", "gauge", s.delegated_left,
         "Inode numbers the MDS delegated, not yet used.");
  metric("strata_fuse_mds_round_trips_total", "counter", s.round_trips,
         "Requests the client waited for an MDS reply on.");
  metric("strata_fuse_mds_replayed_total", "counter", s.replayed,
         "Requests replayed after a reconnect.");
  metric("strata_fuse_unsafe_requests", "gauge", s.unsafe_now,
         "Requests answered unsafe, not yet safe.");
  metric("strata_fuse_cache_entries", "gauge", c.entries, "Directory entries in the lease cache.");
  metric("strata_fuse_cache_inodes", "gauge", c.inodes, "Inodes in the lease cache.");
  metric("strata_fuse_writeback_deferred", "gauge", fs_->deferred_writebacks(),
         "Write-outs of closed files waiting for writeback_delay_ms.");
  metric("strata_fuse_writeback_dropped_total", "counter", fs_->dropped_writebacks(),
         "Closed files never written out: their last link went first.");
  if (data_) {
    FileDataStats d = data_->stats();
    o << "# HELP strata_fuse_data_bytes_total File data bytes by direction.\n"
         "# TYPE strata_fuse_data_bytes_total counter\n"
      << "strata_fuse_data_bytes_total{dir=\"write\"} " << d.bytes_written << "\n"
      << "strata_fuse_data_bytes_total{dir=\"read\"} " << d.bytes_read << "\n"
      << "# HELP strata_fuse_data_object_ops_total Data object operations by kind.\n"
         "# TYPE strata_fuse_data_object_ops_total counter\n"
      << "strata_fuse_data_object_ops_total{op=\"write\"} " << d.object_writes << "\n"
      << "strata_fuse_data_object_ops_total{op=\"read\"} " << d.object_reads << "\n"
      << "strata_fuse_data_object_ops_total{op=\"remove\"} " << d.object_removes << "\n"
      << "# HELP strata_fuse_data_object_errors_total Object operations that failed (a missing "
         "object is a hole, not a failure).\n"
         "# TYPE strata_fuse_data_object_errors_total counter\n"
      << "strata_fuse_data_object_errors_total " << d.object_errors << "\n"
      << "# HELP strata_fuse_data_readahead_hits_total Reads served by read-ahead.\n"
         "# TYPE strata_fuse_data_readahead_hits_total counter\n"
      << "strata_fuse_data_readahead_hits_total " << d.readahead_hits << "\n"
      << "# HELP strata_fuse_data_writeback_bytes Bytes buffered for write-out now.\n"
         "# TYPE strata_fuse_data_writeback_bytes gauge\n"
      << "strata_fuse_data_writeback_bytes " << d.writeback_bytes << "\n"
      << "# HELP strata_fuse_data_files Files whose buffers or inline bytes the client holds "
         "now (open ones, and closed ones until written out).\n"
         "# TYPE strata_fuse_data_files gauge\n"
      << "strata_fuse_data_files " << d.files << "\n";
  }
  return o.str();
}

}  // namespace strata::fuse
