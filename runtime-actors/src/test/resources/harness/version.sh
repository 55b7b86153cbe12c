# A version probe answer: blank lines first, then the version with padding.
printf '\n   \n  fake-harness v2.1.0 (build 7)  \nsecond line\n'
