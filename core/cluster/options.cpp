#include "cluster/options.h"

namespace strata::cluster {

// Each list is owned by the area that reads it; add keys at the end of
// the list you need.
const std::vector<strata_option_spec> &global_options() {
  static const std::vector<strata_option_spec> specs = {
      {"fsid", STRATA_OPT_STRING, "", nullptr, "cluster id; daemons refuse another cluster's"},
      {"mon_addr", STRATA_OPT_STRING, "127.0.0.1:6789", nullptr, "monitor address host:port"},
      {"keyring", STRATA_OPT_STRING, "", nullptr, "keyring file with this entity's key"},
      {"heartbeat_interval_ms", STRATA_OPT_INT, "500", nullptr,
       "how often OSDs ping their peers and report to the monitor"},
      {"heartbeat_grace_ms", STRATA_OPT_INT, "3000", nullptr,
       "a peer silent this long is reported down"},
      {"log_file", STRATA_OPT_STRING, "", nullptr, "daemon log file (default: stderr)"},
      {"mon_keepalive_interval_ms", STRATA_OPT_INT, "1000", nullptr,
       "how often OSDs and clients ping the monitor on their session (0: never)"},
      {"mon_keepalive_timeout_ms", STRATA_OPT_INT, "5000", nullptr,
       "a monitor session with no answer for this long is closed and made again"},
      {"mds_beacon_interval_ms", STRATA_OPT_INT, "500", nullptr,
       "how often an MDS tells the monitor it is alive (docs/FILESYSTEM.md)"},
      {"mds_beacon_grace_ms", STRATA_OPT_INT, "3000", nullptr,
       "an MDS silent this long is removed from the map; its filesystem goes to a standby"},
  };
  return specs;
}

const std::vector<strata_option_spec> &mon_options() {
  static const std::vector<strata_option_spec> specs = {
      {"mon_data", STRATA_OPT_STRING, "", nullptr, "monitor data directory (RocksDB map store)"},
      {"mon_osd_down_out_interval_ms", STRATA_OPT_INT, "600000", nullptr,
       "a down OSD is marked out after this long (its PGs move elsewhere); 0: never"},
      {"mon_osd_min_down_reporters", STRATA_OPT_INT, "2", nullptr,
       "distinct failure domains (mon_osd_reporter_subtree_level) whose OSDs must report an "
       "OSD before it is marked down; with fewer domains in the map, that many distinct OSDs"},
      {"mon_default_pool_size", STRATA_OPT_INT, "3", nullptr, "replicas of a new pool"},
      {"mon_default_pool_min_size", STRATA_OPT_INT, "2", nullptr,
       "replicas a new pool needs up to accept writes"},
      {"mon_default_pg_num", STRATA_OPT_INT, "32", nullptr, "PGs of a new pool"},
      {"mon_placement", STRATA_OPT_STRING, "crush", nullptr,
       "placement plugin a new cluster (mon --mkfs) uses"},
      {"mon_map_history", STRATA_OPT_INT, "500", nullptr,
       "map epochs (full + incremental) the monitor keeps"},
      {"mon_osd_reporter_subtree_level", STRATA_OPT_STRING, "host", nullptr,
       "placement type that makes a failure domain for counting down reports (osd: each OSD)"},
      {"mon_osd_flap_max_markdowns", STRATA_OPT_INT, "5", nullptr,
       "an OSD reported down this often within mon_osd_flap_window_ms is held down (0: never)"},
      {"mon_osd_flap_window_ms", STRATA_OPT_INT, "600000", nullptr,
       "the window mon_osd_flap_max_markdowns counts in"},
      {"mon_osd_flap_hold_ms", STRATA_OPT_INT, "600000", nullptr,
       "how long a flapping OSD stays held down unless `strata osd unhold` lets it back "
       "(0: until then)"},
      {"mon_osd_nearfull_ratio", STRATA_OPT_STRING, "0.85", nullptr,
       "an OSD whose disk is this full raises a nearfull health warning"},
      {"mon_osd_backfillfull_ratio", STRATA_OPT_STRING, "0.90", nullptr,
       "an OSD whose disk is this full takes no more backfill or recovery (health warning)"},
      {"mon_osd_full_ratio", STRATA_OPT_STRING, "0.95", nullptr,
       "an OSD whose disk is this full is marked full in the map: its PGs refuse new writes "
       "with ENOSPC (deletes still work); HEALTH_ERR"},
  };
  return specs;
}

const std::vector<strata_option_spec> &osd_options() {
  static const std::vector<strata_option_spec> specs = {
      {"osd_addr", STRATA_OPT_STRING, "127.0.0.1", nullptr, "address the OSD listens on"},
      {"osd_port", STRATA_OPT_INT, "0", nullptr, "port (0: any free port)"},
      {"osd_host", STRATA_OPT_STRING, "", nullptr, "host name in the placement tree"},
      {"osd_op_threads", STRATA_OPT_INT, "2", nullptr,
       "threads executing client ops (PGs are spread over them; more than the cores only adds "
       "context switches)"},
      {"osd_msg_threads", STRATA_OPT_INT, "1", nullptr,
       "network threads (reading, decoding and sending messages); one keeps up with several "
       "hundred MB/s and costs fewer context switches than two where cores are few"},
      {"osd_stage_threads", STRATA_OPT_INT, "2", nullptr,
       "threads that stage large full-object writes as they arrive (an O_DIRECT write each), "
       "in parallel and off the op threads"},
      {"osd_recovery_max_active", STRATA_OPT_INT, "4", nullptr,
       "objects recovered at once per OSD (keeps client I/O flowing)"},
      {"osd_pg_log_entries", STRATA_OPT_INT, "3000", nullptr,
       "PG log length kept for log-based recovery; older divergence backfills"},
      {"osd_full_ratio", STRATA_OPT_STRING, "0.95", nullptr,
       "a primary whose own disk (or a replica's) is this full, counting the write, refuses "
       "client writes with ENOSPC before the map's full flag comes, and has the monitor mark "
       "it full; the MDS's own writes go on up to osd_failsafe_full_ratio (keep this at "
       "mon_osd_full_ratio: the lower of the two is where writes stop)"},
      {"osd_failsafe_full_ratio", STRATA_OPT_STRING, "0.97", nullptr,
       "a primary whose own disk is this full refuses new writes with ENOSPC, whatever the map "
       "says (a burst faster than the monitor's full flag cannot fill the disk)"},
      {"failpoints", STRATA_OPT_STRING, "", nullptr,
       "fault injection for tests: NAME[@SUBJECT]=ACTION[*COUNT], ... with ACTION error(E), "
       "kill or pause(MS) (core/common/failpoints.h); the OSD's points are in "
       "core/osd/osd_failpoints.h"},
  };
  return specs;
}

const std::vector<strata_option_spec> &client_options() {
  static const std::vector<strata_option_spec> specs = {
      {"client_name", STRATA_OPT_STRING, "client.admin", nullptr, "entity the client connects as"},
      {"client_op_timeout_ms", STRATA_OPT_INT, "0", nullptr,
       "give up on an op after this long (0: wait for the cluster)"},
      {"key", STRATA_OPT_STRING, "", nullptr,
       "this client's secret (base64), instead of looking it up in the keyring file"},
      {"client_io_threads", STRATA_OPT_INT, "1", nullptr,
       "network threads of a client (replies are processed and callbacks run on them)"},
      {"client_connect_timeout_ms", STRATA_OPT_INT, "3000", nullptr,
       "how long one connection attempt to the monitor or an OSD may take"},
  };
  return specs;
}

const std::vector<strata_option_spec> &mds_options() {
  static const std::vector<strata_option_spec> specs = {
      {"mds_addr", STRATA_OPT_STRING, "127.0.0.1:0", nullptr,
       "host:port the MDS listens on for filesystem clients (port 0: any free port)"},
      {"mds_fs", STRATA_OPT_STRING, "", nullptr,
       "standby-for: take over only this filesystem (empty: any)"},
      {"mds_cache_memory_limit", STRATA_OPT_INT, "268435456", nullptr,
       "bytes of inodes and directory entries the MDS caches (least recently used clean items "
       "are evicted beyond it)"},
      {"mds_lease_ms", STRATA_OPT_INT, "30000", nullptr,
       "how long a client lease lasts unless renewed (a silent client holds others up at most "
       "this long)"},
      {"mds_delegate_inos", STRATA_OPT_INT, "1024", nullptr,
       "inode numbers per range the MDS delegates to a client for asynchronous creates "
       "(0: none, the client creates synchronously)"},
      {"mds_journal_segment_bytes", STRATA_OPT_INT, "4194304", nullptr,
       "size of one metadata journal segment object"},
      {"mds_dir_split_entries", STRATA_OPT_INT, "10000", nullptr,
       "a directory fragment with more entries than this is split"},
      {"mds_journal_delay_ms", STRATA_OPT_INT, "20", nullptr,
       "how long a change may wait for others to share its metadata journal write while "
       "nobody waits for it to be durable (an fsync, a lease recall or an unmount cuts the "
       "wait short; 0: write at once)"},
      {"mds_apply_max_delay_ms", STRATA_OPT_INT, "2000", nullptr,
       "the longest a journaled change waits before it is written to the directory objects "
       "(sooner once the journal is quiet)"},
      {"mds_purge_busy_rate", STRATA_OPT_INT, "200", nullptr,
       "deleted files' data objects removed per second while clients are busy (rising the "
       "longer purges wait; 0: no limit)"},
      {"mds_inline_data_max", STRATA_OPT_INT, "16384", nullptr,
       "files up to this many bytes keep their data inline in their inode, journaled by the "
       "MDS, with no data object (0: off; at most 65536)"},
      {"fs_max_file_size", STRATA_OPT_INT, "1099511627776", nullptr,
       "largest file size clients may create (EFBIG beyond)"},
  };
  return specs;
}

}  // namespace strata::cluster
