module together-gpu-clusters/tools/images

go 1.26
