"""Lists the import graph between latscope's top-level modules (crate:: paths outside
#[cfg(test)]) and any cycle in it. Run from the repository root: python3 contrib/dev/import_cycles.py"""
import re,os,collections,itertools
edges=collections.defaultdict(set)
for root,_,files in os.walk('src'):
    for f in files:
        if not f.endswith('.rs'): continue
        p=os.path.join(root,f)
        rel=p[4:]
        top=rel.split('/')[0].replace('.rs','')
        if top in ('main','lib'): continue
        s=open(p).read()
        # strip tests modules roughly
        s=re.split(r'#\[cfg\(test\)\]',s)[0]
        for m in re.finditer(r'crate::(\w+)',s):
            t=m.group(1)
            if t!=top: edges[top].add(t)
        if '/' in rel:
            for m in re.finditer(r'\bsuper::(\w+)',s):
                pass
import sys
# find cycles among top modules
def reach(a,b,seen=None):
    seen=seen or set()
    if a==b: return True
    for n in edges[a]:
        if n not in seen:
            seen.add(n)
            if reach(n,b,seen): return True
    return False
for a in sorted(edges):
    print(a,'->',sorted(edges[a]))
print('cycles:')
for a in sorted(edges):
    for b in sorted(edges[a]):
        if reach(b,a): print(' ',a,'<->',b)
