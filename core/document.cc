#include "core/document.h"

namespace shardplan {

bool Document::IsMeshAxis(NameId axis) const {
  for (const MeshAxis& a : mesh) {
    if (a.name == axis) return true;
  }
  return false;
}

}  // namespace shardplan
