// Placeholder until the identity resolver lands.
#include "identity/resolver.hpp"

namespace gua::identity {

Resolver::Resolver(std::string proc_root) : m_proc_root(std::move(proc_root)) {}

ProcessFacts Resolver::resolve(std::uint32_t /*pid*/) { return ProcessFacts{}; }

void Resolver::sweep() {}

} // namespace gua::identity
