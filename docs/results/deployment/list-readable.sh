echo "uid $(id -u); mounts: $(grep -E ' /bundle' /proc/mounts | awk '{print $2}' | tr '\n' ' ')"
echo "readable files outside the image (/bundle*, /deployment, /tmp, /root):"
find /bundle /bundles /deployment /tmp /root -type f -readable 2>/dev/null | sort | sed 's/^/  /'
echo "key shares (by name, or content 'threshold-paillier/key-share') readable anywhere:"
find / \( -path /proc -o -path /sys -o -path /usr -o -path /opt \) -prune -o -type f -readable \( -name 'key_share*' -o -name 'party_*.npz' \) -print 2>/dev/null | sed 's/^/  /'
grep -rlsI --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr --exclude-dir=opt --exclude-dir=app 'threshold-paillier/key-share' / 2>/dev/null | sed 's/^/  content: /'
echo "private keys readable anywhere:"
grep -rlsI --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr --exclude-dir=opt 'PRIVATE KEY-----' / 2>/dev/null | sed 's/^/  /'
