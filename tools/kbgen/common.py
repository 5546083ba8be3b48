import yaml, json
REF = '/work/shared/reference/frameworks/'
def load(name):
    return yaml.safe_load(open(REF + name))
def q(s):
    return json.dumps(s, ensure_ascii=False)
def arr(xs):
    return '[' + ', '.join(q(x) for x in xs) + ']'
def inline(d):
    return '{ ' + ', '.join('%s = %s' % (k if k.replace('_','').replace('-','').isalnum() and '-' not in k else q(k), q(v) if not isinstance(v, (list, bool)) else (arr(v) if isinstance(v, list) else str(v).lower())) for k, v in d.items()) + ' }' if d else '{}'
def kv(k, v):
    if isinstance(v, bool): return '%s = %s' % (k, str(v).lower())
    if isinstance(v, list): return '%s = %s' % (k, arr(v))
    if isinstance(v, dict): return '%s = %s' % (k, inline(v))
    return '%s = %s' % (k, q(v))
def pyrange(vers):
    vs = sorted(vers, key=lambda s: tuple(int(p) for p in s.split('.')))
    lo, hi = vs[0], vs[-1]
    maj, mi = hi.split('.')
    return '>=%s,<%s.%d' % (lo, maj, int(mi) + 1)
def vkey(v):
    from packaging.version import Version
    return Version(v)
