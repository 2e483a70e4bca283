# A shell as PID 1 with a SIGTERM handler of the shape Together's preemptible-compute page shows:
# trap the signal, let the trainer save, then `exit EXIT_CODE`. With 0 (as on that page) the pod
# ends Succeeded and the Job counts the index as done; the fixed handler exits 143.
python3 -u -c "$0" &
child=$!
trap 'kill -TERM $child; wait $child; exit EXIT_CODE' TERM
wait $child
