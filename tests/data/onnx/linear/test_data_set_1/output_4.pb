B
gemm_plainJ!Хтѕ@c>ѕїъWЛѕ­ьяѕ