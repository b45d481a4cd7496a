// perm.js: what the logged-in user may do, from GET /svc/v1/self. Resource
// names are regular expressions matched against the whole name, as the
// server's authorizer matches them, so the console hides exactly what the API
// would refuse (and still shows a 403 plainly if it happens).

const cache = new Map();
function re(pattern) {
  let r = cache.get(pattern);
  if (r === undefined) {
    try { r = new RegExp(`^(?:${pattern})$`); } catch { r = null; }
    cache.set(pattern, r);
  }
  return r;
}

// can: may the user do action ('READ' or 'WRITE') on the resource type
// ('DATASOURCE', 'STATE', 'CONFIG', ...) named name?
export function can(self, type, name, action) {
  if (!self || !self.securityEnabled) return true;
  return (self.permissions || []).some((p) => {
    if (p.action !== action || !p.resource || p.resource.type !== type) return false;
    const r = re(p.resource.name);
    return !!r && r.test(name);
  });
}

// canAny: may the user do action on at least one resource of the type (a
// listing such as the datasources is then worth showing, filtered).
export function canAny(self, type, action) {
  if (!self || !self.securityEnabled) return true;
  return (self.permissions || []).some((p) => p.action === action && p.resource && p.resource.type === type);
}
