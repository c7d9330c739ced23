// Building operations: argument errors, limits, data ownership.
#include <catch2/catch.hpp>

#include "client/object_operation.h"

using namespace strata;
using namespace strata::client;

TEST_CASE("write steps mark an operation as a write, reads and guards do not") {
  ObjectOperation op;
  op.assert_exists();
  op.getxattr("a", nullptr);
  CHECK_FALSE(op.is_write());
  op.omap_clear();
  CHECK(op.is_write());
  CHECK(op.size() == 3);
}

TEST_CASE("an argument error is remembered and the bad step left out") {
  ObjectOperation op;
  op.setxattr("", "v");
  op.setxattr(std::string(256, 'n'), "v");
  op.getxattr(std::string("a\0b", 3), nullptr);
  CHECK(op.empty());
  REQUIRE_FALSE(op.error().ok());
  CHECK(op.error().code() == -EINVAL);
  CHECK_THAT(op.error().message(), Catch::Contains("setxattr"));  // the first error sticks

  ObjectOperation o2;
  o2.omap_set({"a", "b"}, {"1"});
  CHECK(o2.error().code() == -EINVAL);
}

TEST_CASE("more data than one operation may carry is E2BIG") {
  ObjectOperation op;
  op.borrow_data(true);  // no copy of the pretend buffer is made
  std::string_view huge(reinterpret_cast<const char *>(0x1000), kMaxOpData);
  op.write(0, huge.substr(0, kMaxOpData / 2));
  CHECK(op.error().ok());
  op.write(0, huge);
  CHECK(op.error().code() == -E2BIG);
  CHECK(op.size() == 1);

  ObjectOperation o2;
  o2.omap_set({std::string(kMaxOpMeta, 'k')}, {"v"});
  CHECK(o2.error().code() == -E2BIG);
}

TEST_CASE("copied data is independent of the caller's buffer but borrowed data is not") {
  std::string buf = "aaaa";
  ObjectOperation copied;
  copied.write(0, buf);
  ObjectOperation borrowed;
  borrowed.borrow_data(true);
  borrowed.write(0, buf);
  buf[0] = 'b';
  CHECK(copied.segments()[0].view() == "aaaa");
  CHECK(borrowed.segments()[0].view() == "baaa");
}

TEST_CASE("a borrowing copy shares the original's bytes and keeps its steps") {
  ObjectOperation op;
  op.write_full("payload");
  op.setxattr("k", "v");
  ObjectOperation c = op.borrowing_copy();
  REQUIRE(c.segments().size() == 2);
  CHECK(c.segments()[0].view().data() == op.segments()[0].view().data());
  CHECK(c.steps().size() == 2);
  CHECK(c.is_write());
  CHECK(c.data_bytes() == op.data_bytes());
}

TEST_CASE("copies of an operation keep valid data after the original is gone") {
  ObjectOperation copy;
  {
    ObjectOperation op;
    op.append(std::string(100, 'x'));
    op.append("short");  // small-string storage moves with the string
    copy = op;
  }
  CHECK(copy.segments()[0].view() == std::string(100, 'x'));
  CHECK(copy.segments()[1].view() == "short");
}

TEST_CASE("failing the handlers gives every read step the error") {
  ObjectOperation op;
  int a = 0, b = 0;
  op.read(0, 10, [&](const StepResult &r) { a = r.rc; });
  op.write(0, "x");
  op.stat([&](const StepResult &r) { b = r.rc; });
  op.fail_handlers(-ETIMEDOUT);
  CHECK(a == -ETIMEDOUT);
  CHECK(b == -ETIMEDOUT);
}

TEST_CASE("snapshot steps: set_snap stays first, snap context and trim are writes, ids travel "
          "big-endian") {
  ObjectOperation r;
  r.stat(nullptr);
  r.set_snap(7);
  r.read(0, 10, nullptr);
  r.set_snap(9);  // replaces, still first
  REQUIRE(r.size() == 3);
  CHECK(r.steps()[0].code == StepCode::kSetSnap);
  CHECK(r.steps()[0].version == 9);
  CHECK_FALSE(r.is_write());
  r.set_snap(0);  // back to the object as it is
  CHECK(r.steps()[0].code == StepCode::kStat);

  ObjectOperation w;
  w.snap_context(3);
  w.snap_trim({1, 0x0102030405060708ull});
  CHECK(w.is_write());
  REQUIRE(w.steps()[1].keys.size() == 2);
  CHECK(w.steps()[1].keys[1] == std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  w.snap_rollback(0);
  CHECK(w.error().code() == -EINVAL);
}
