// The reference framework's messages (spec section 5), one builder per code.
// Names are printed with Python's repr; lists as Python lists.
#ifndef SHARDPLAN_CORE_DIAGNOSTICS_MESSAGES_H_
#define SHARDPLAN_CORE_DIAGNOSTICS_MESSAGES_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/text/pyrepr.h"

namespace shardplan::msg {

inline std::string UnknownModule(std::string_view fqn) { return absl::StrCat("no module at ", PyRepr(fqn)); }
inline std::string MultipleOwners(std::string_view fqn) {
  return absl::StrCat("multiple layout/communication owners for module ", PyRepr(fqn));
}
inline std::string ParallelMemberUndeclared() {
  return "a parallel family member must declare its explicit execution protocol";
}
// `names` sorted.
inline std::string UnknownOutput(const std::vector<std::string_view>& names) {
  return absl::StrCat("layout declares unknown outputs ", PyReprList(names));
}
inline std::string NativeNoMatch(std::string_view pattern) {
  return absl::StrCat("native binding pattern ", PyRepr(pattern), " matched no module");
}
inline std::string NativeOverlapsFamily(std::string_view fqn) {
  return absl::StrCat("native binding at ", PyRepr(fqn), " overlaps a family-owned subtree");
}
inline std::string OverlappingCommunication(std::string_view parent, std::string_view fqn) {
  return absl::StrCat("overlapping communication owners at ", PyRepr(parent), " and ", PyRepr(fqn));
}
inline std::string LegacyInjection() { return "module-owned layouts cannot install legacy compute injection"; }
inline std::string PortsMissing() {
  return "module-owned providers must declare params, in_src and in_dst explicitly";
}
inline std::string PortsMismatch() { return "module-owned in_src and in_dst must declare the same input names"; }
// `names` sorted.
inline std::string UnknownForwardInput(const std::vector<std::string_view>& names) {
  return absl::StrCat("layout declares unknown forward inputs ", PyReprList(names));
}
inline std::string DuplicateOutputName() { return "output names must be unique"; }
inline std::string UnknownAxis(std::string_view axis) {
  return absl::StrCat("module layouts cannot declare storage/unknown axis ", PyRepr(axis));
}
inline std::string PartialParameter() { return "parameter source layouts cannot be Partial"; }
inline std::string ParallelUnknownAxis(std::string_view axis) {
  return absl::StrCat("parallel module declares unknown communication axis ", PyRepr(axis));
}
inline std::string UnknownParameter(std::string_view full_name) {
  return absl::StrCat("layout parameter ", PyRepr(full_name), " does not exist");
}
inline std::string NestedDuplicate(std::string_view full_name) {
  return absl::StrCat("parent layout duplicates nested module ownership at ", PyRepr(full_name));
}
inline std::string SharedConflict(std::string_view full_name) {
  return absl::StrCat("shared parameter ", PyRepr(full_name), " has conflicting layouts");
}
// `names` in named_parameters order.
inline std::string OmittedParameters(std::string_view fqn, const std::vector<std::string_view>& names) {
  return absl::StrCat("module-owned layout ", PyRepr(fqn), " omits parameters ", PyReprList(names));
}
inline std::string OverrideSharedConflict(std::string_view full_name) {
  return absl::StrCat("explicit overrides give shared parameter ", PyRepr(full_name), " conflicting layouts");
}
inline std::string OverrideRemovedOwnership(std::string_view fqn) {
  return absl::StrCat("final override removed required parameter ownership from ", PyRepr(fqn));
}
inline std::string OverrideRemovedCoverage() {
  return "final layout overrides removed required module-owned parameter coverage";
}
inline std::string FamilyLayoutChanged(std::string_view fqn) {
  return absl::StrCat("final layout for ", PyRepr(fqn), " differs from its applied family layout");
}

// fqn + "." + local, or local at the root.
inline std::string FullName(std::string_view fqn, std::string_view local) {
  return fqn.empty() ? std::string(local) : absl::StrCat(fqn, ".", local);
}

}  // namespace shardplan::msg

#endif  // SHARDPLAN_CORE_DIAGNOSTICS_MESSAGES_H_
