import sys, timeit, gc
sys.path.insert(0, "build-py/test/python")
import torch, streamlike_pb_test as p, streamlike_nb_test as n
s = torch.cuda.Stream(); h = s.cuda_stream
g = dict(s=s, h=h, pv=p.noop_view, nv=n.noop_view, pi=p.noop_int, ni=n.noop_int, ps=p.noop_shared, ns=n.noop_shared, pho=p.handle_of)
def t(stmt, n=200000):
    timeit.timeit(stmt, globals=g, number=20000)
    return min(timeit.repeat(stmt, globals=g, number=n, repeat=7)) / n * 1e9
for stmt in ["s.__cuda_stream__()", "pv(s)", "nv(s)", "pi(h)", "ni(h)", "pho(s)", "pv(s)", "ps(s)", "ns(s)"]:
    print(f"{stmt:22s} {t(stmt):8.1f} ns")
