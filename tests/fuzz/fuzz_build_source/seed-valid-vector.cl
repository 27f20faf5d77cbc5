kernel void v(global uchar16 *a, global short8 *b) { a[0] = as_uchar16(b[0]); b[1] = select(b[0], b[1], b[0] > b[1]); }
