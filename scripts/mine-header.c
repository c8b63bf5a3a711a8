/*
 * mine-header: searches the nonce of an 80-byte Bitcoin block header whose hash must meet
 * a compact target (bits). It exists for conformance cases that need a header mined at a
 * test network's proof-of-work limit (0x1d00ffff: about 2^32 double SHA-256 each, minutes
 * in C where the generator's JavaScript would take hours): conformance/generate/
 * header-timewarp.ts keeps the nonces it found as a table and only checks them. Usage:
 *   gcc -O3 -o /tmp/mine-header scripts/mine-header.c -lcrypto
 *   nice -n 19 /tmp/mine-header <the header's first 76 bytes, hex> <bits, hex> [max tries]
 * It hashes the first 64 bytes once (the midstate) and tries nonces from 0 to 2^32 - 1;
 * when they are all spent it adds 1 to the merkle root's last four bytes (little-endian,
 * the "roll") and starts again. Prints the roll, the nonce, the header and its hash
 * (display hex); with max tries, stops after that many and prints the rate instead.
 * About 10 M headers a second on one core with OpenSSL's SHA-NI code.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int unhex(const char *s, uint8_t *out, size_t n) {
  if (strlen(s) != 2 * n) return -1;
  for (size_t i = 0; i < n; i++) {
    unsigned v;
    if (sscanf(s + 2 * i, "%2x", &v) != 1) return -1;
    out[i] = (uint8_t)v;
  }
  return 0;
}

static void be32(uint8_t *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: mine-header <prefix76hex> <bitshex> [max-nonces]\n"); return 2; }
  uint8_t header[80] = {0};
  if (unhex(argv[1], header, 76)) { fprintf(stderr, "prefix must be 76 bytes of hex\n"); return 2; }
  uint32_t bits = (uint32_t)strtoul(argv[2], NULL, 16);
  uint64_t limit = argc > 3 ? strtoull(argv[3], NULL, 10) : 0;
  /* The target as 32 big-endian bytes (SetCompact, positive and in range assumed). */
  uint8_t target[32] = {0};
  int size = bits >> 24;
  uint32_t word = bits & 0x007fffff;
  for (int i = 0; i < 3; i++) {
    int pos = 32 - size + i; /* byte i of the mantissa, most significant first */
    if (pos >= 0 && pos < 32) target[pos] = (uint8_t)(word >> (8 * (2 - i)));
  }
  uint8_t block2[64] = {0}, inner[64] = {0};
  block2[16] = 0x80; block2[62] = 0x02; block2[63] = 0x80; /* 640 bits */
  inner[32] = 0x80; inner[62] = 0x01; inner[63] = 0x00;    /* 256 bits */
  uint64_t tried = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (uint32_t roll = 0;; roll++) {
    uint32_t tail = (uint32_t)header[64] | (uint32_t)header[65] << 8 | (uint32_t)header[66] << 16 | (uint32_t)header[67] << 24;
    if (roll) { tail++; header[64] = tail; header[65] = tail >> 8; header[66] = tail >> 16; header[67] = tail >> 24; }
    SHA256_CTX mid;
    SHA256_Init(&mid);
    SHA256_Transform(&mid, header);
    memcpy(block2, header + 64, 12);
    for (uint64_t n = 0; n <= 0xffffffffu; n++) {
      if (limit && tried >= limit) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
        printf("tried %llu in %.2f s: %.2f M/s\n", (unsigned long long)tried, s, tried / s / 1e6);
        return 1;
      }
      tried++;
      block2[12] = n; block2[13] = n >> 8; block2[14] = n >> 16; block2[15] = n >> 24;
      SHA256_CTX c = mid;
      SHA256_Transform(&c, block2);
      for (int i = 0; i < 8; i++) be32(inner + 4 * i, c.h[i]);
      SHA256_CTX d;
      SHA256_Init(&d);
      SHA256_Transform(&d, inner);
      if ((d.h[7] & 0xff) != 0) continue; /* quick reject: the hash's most significant byte */
      uint8_t digest[32], num[32];
      for (int i = 0; i < 8; i++) be32(digest + 4 * i, d.h[i]);
      for (int i = 0; i < 32; i++) num[i] = digest[31 - i];
      if (memcmp(num, target, 32) > 0) continue;
      memcpy(header + 76, block2 + 12, 4);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
      printf("roll=%u nonce=%u tried=%llu seconds=%.1f header=", roll, (uint32_t)n, (unsigned long long)tried, s);
      for (int i = 0; i < 80; i++) printf("%02x", header[i]);
      printf(" hash=");
      for (int i = 0; i < 32; i++) printf("%02x", num[i]);
      printf("\n");
      return 0;
    }
  }
}
