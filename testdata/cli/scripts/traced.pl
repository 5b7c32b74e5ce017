thr :- throw(x).
:- dynamic(d/1).
d(1).
z :- fail.
