# Shared by the soak scripts (sourced): what a process holds, read from /proc.

# "RSS_KIB,FDS" of process $1 (VmRSS and open descriptors); nothing when it is gone.
proc_rss_fds() {
  local rss fds
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || true)
  fds=$(ls "/proc/$1/fd" 2>/dev/null | wc -l)
  [ -n "$rss" ] && echo "$rss,$fds"
  return 0
}

# The mappings whose Rss differs between two copies of /proc/PID/smaps ($1, $2), one line
# each (address range, file or [anon], Rss before -> after; a mapping that grew or shrank
# has a new range, so it shows as one line gone and one new), then both totals.
smaps_rss_changes() {
  awk '
    /^[0-9a-f]+-[0-9a-f]+ / { key = $1 " " ($6 == "" ? "[anon]" : $6); next }
    /^Rss:/ { if (FNR == NR) a[key] = $2; else b[key] = $2 }
    END {
      for (k in a) { ta += a[k]; if (b[k] + 0 != a[k]) printf "%s %d -> %d kB\n", k, a[k], b[k] + 0 }
      for (k in b) { tb += b[k]; if (!(k in a) && b[k] != 0) printf "%s 0 -> %d kB\n", k, b[k] }
      printf "smaps Rss total %d -> %d kB\n", ta, tb
    }' "$1" "$2"
}
