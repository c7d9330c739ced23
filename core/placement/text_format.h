// The text form of a placement map: what operators write, review and diff.
//
//   # comments run to the end of the line
//   tunable choose_total_tries 50
//   type 0 device
//   type 1 host
//   type 10 root
//   device 0 osd.0 weight 4.000 class hdd
//   device 1 osd.1 weight 2.000 class ssd reweight 0.800 out
//   host node1 id -2 {        # bucket: <type> <name> [id <negative>] {
//     osd.0                   # one child per line, by name
//     osd.1
//   }
//   root default id -1 {
//     node1
//   }
//   rule replicated id 0 {
//     take default class hdd  # class is optional
//     chooseleaf firstn 0 type host   # 0 = the replica count, -1 = one less
//     emit
//   }
//   exception 1.2f osd.3 -> osd.17    # PG 1.2f: use osd.17 instead of osd.3
//
// Children may be named before they are declared. Bucket and rule ids may
// be left out; they are then the lowest free ones, and the written form
// always states them, so that a map read back is the same map. Bucket
// weights are the sums of their devices (written as comments).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "placement/map_validation.h"
#include "placement/placement_map.h"

namespace strata::placement {

// Parses and validates. Errors read "line N: ..." (unknown bucket, cycle,
// duplicate id, negative weight, unsatisfiable rule, syntax). On success
// *lines (if given) tells where each entity was written.
Result<PlacementMap> parse_text(std::string_view text, SourceLines *lines = nullptr);

// The canonical text of a valid map; parse_text(format_text(m)) == m.
std::string format_text(const PlacementMap &map);

// One rule step as the text form writes it ("chooseleaf firstn 0 type
// host"); validation errors quote steps in the same words.
std::string step_text(const PlacementMap &map, const Step &s);

}  // namespace strata::placement
